import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { type INestApplication, Logger } from '@nestjs/common';
import { createApp } from './app.factory';
import { limitHeapGrowth } from './common';
import { AppConfig, loadConfig, InvalidConfigError, type RoleName } from './config';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres';
import { RunHandoff } from './handoff';
import { Lifecycle, MetricsService } from './observability';
import { migrateDatabase } from './schema';
import { keyringText, parseKeyring, readOrCreateKeyFile } from './secrets';
import { startTracing } from './tracing';
import { WorkerService } from './worker';
import { joinPool, WORKER_PROCESS_FLAG, WorkerPool } from './worker-pool';

/** How long the primary waits at boot for its worker processes to say they consume jobs. */
const POOL_READY_TIMEOUT_MS = 60_000;
/** A worker process that does not answer a metrics request within this is left out of a scrape. */
const POOL_METRICS_TIMEOUT_MS = 2_000;

/**
 * Boot order: validate config, start the embedded Postgres when no DATABASE_URL is given,
 * migrate under the advisory lock, then start the roles and listen. When this process runs the
 * worker role beside others and WORKER_PROCESSES > 0, the worker role runs in that many forked
 * children of this same program instead (`--worker-process`), and this primary keeps the
 * others. SIGTERM/SIGINT drain within SHUTDOWN_TIMEOUT_MS (the children first) and exit 0. This
 * file is the only one that talks to the console directly: it runs before the structured
 * logger exists.
 */
async function main(): Promise<void> {
  if (process.argv.includes(WORKER_PROCESS_FLAG)) return workerProcess();
  const config = loadConfig(process.env);
  limitHeapGrowth(config.heapGrowthPercent);
  // Before anything that makes spans; the SDK's exporter reads its OTEL_EXPORTER_OTLP_* itself.
  const tracing = config.tracing.enabled
    ? startTracing({ serviceName: config.tracing.serviceName })
    : null;
  let embedded: EmbeddedPostgresHandle | null = null;
  let resolved: AppConfig = config;
  if (!config.databaseUrl) {
    embedded = await startEmbeddedPostgres({
      dataDir: config.dataDir,
      log: (message) => config.logLevel === 'debug' && console.log(`[postgres] ${message}`),
    });
    resolved = {
      ...config,
      databaseUrl: embedded.url,
      adminToken: config.adminToken ?? (await readOrCreateAdminToken(config.dataDir)),
      secretsKeyring:
        config.secretsKeyring ?? parseKeyring(await readOrCreateKeyFile(config.dataDir)),
    };
  }
  const migrations = await migrateDatabase(resolved.databaseUrl!, resolved.secretsKeyring!);
  const poolSize = workerPoolSize(resolved);
  const app = await createApp(poolSize > 0 ? withoutWorkerRole(resolved) : resolved);
  // The children first: once this process answers on its port, the whole service is up.
  const pool = poolSize > 0 ? await startWorkerPool(app, resolved, poolSize) : null;
  await app.listen(resolved.port, '0.0.0.0');
  const url = (await app.getUrl()).replace('[::1]', 'localhost').replace('0.0.0.0', 'localhost');
  printBanner(resolved, url, embedded !== null, migrations.applied, pool);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log(`dueline: ${signal} received, draining (up to ${resolved.shutdownTimeoutMs} ms)`);
    // The pool's children drain within their own bound first, then this process's roles.
    const bound = resolved.shutdownTimeoutMs + (pool ? resolved.shutdownTimeoutMs + 1000 : 0);
    const deadline = setTimeout(() => {
      console.error('dueline: shutdown deadline passed, exiting');
      process.exit(1);
    }, bound + 5000);
    deadline.unref();
    try {
      // Children first: their attempts complete under their fences while the database (and the
      // embedded cluster) is still there.
      await pool?.stop(resolved.shutdownTimeoutMs + 1000);
      await withDeadline(app.close(), resolved.shutdownTimeoutMs);
    } finally {
      if (embedded) await embedded.stop();
      await tracing?.shutdown().catch(() => undefined);
    }
    console.log('dueline: stopped');
    process.exit(0);
  };
  // The embedded-postgres package registers (through async-exit-hook) SIGTERM/SIGINT handlers
  // that stop the cluster and exit 143/130 at once, under the drain: pg-boss loses its
  // connections mid-stop and the process dies non-zero. This process owns these signals, and
  // shutdown stops the embedded cluster itself, last.
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * A worker process of the primary's pool: the worker role only, on the database the primary
 * resolved (it has migrated it), no HTTP listener (the primary's `/metrics` shows this process's
 * series). It drains and exits on SIGTERM/SIGINT and when the primary is gone.
 */
async function workerProcess(): Promise<void> {
  const config = loadConfig(process.env);
  limitHeapGrowth(config.heapGrowthPercent);
  const tracing = config.tracing.enabled
    ? startTracing({ serviceName: config.tracing.serviceName })
    : null;
  const app = await createApp(config);
  await app.init();
  const logger = new Logger('WorkerProcess');
  let stopping = false;
  const shutdown = async (why: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    logger.log({ why }, 'worker process draining');
    const deadline = setTimeout(() => process.exit(1), config.shutdownTimeoutMs + 5000);
    deadline.unref();
    try {
      await withDeadline(app.close(), config.shutdownTimeoutMs);
    } finally {
      await tracing?.shutdown().catch(() => undefined);
    }
    process.exit(0);
  };
  process.removeAllListeners('SIGTERM');
  process.removeAllListeners('SIGINT');
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  const metrics = app.get(MetricsService);
  const worker = app.get(WorkerService);
  joinPool(process, {
    workerId: worker.workerId,
    metrics: () => metrics.ownMetrics(),
    onPrimaryLost: () => void shutdown('primary gone'),
    onHandoff: (jobs) => void worker.takeHandoff(jobs),
    reportRoom: (report) => worker.reportRoom(report),
  });
}

/** Worker processes to fork: only beside other roles (a ROLES=worker replica is one already). */
function workerPoolSize(config: AppConfig): number {
  return config.roles.has('worker') && config.roles.size > 1 ? config.worker.processes : 0;
}

function withoutWorkerRole(config: AppConfig): AppConfig {
  const roles = new Set<RoleName>(config.roles);
  roles.delete('worker');
  return { ...config, roles };
}

async function startWorkerPool(
  app: INestApplication,
  config: AppConfig,
  size: number,
): Promise<WorkerPool> {
  const pool = new WorkerPool({
    size,
    entry: __filename,
    // The resolved database, token and key: with the embedded Postgres they exist only here.
    env: {
      ...process.env,
      ROLES: 'worker',
      WORKER_PROCESSES: '0',
      DATABASE_URL: config.databaseUrl!,
      ADMIN_TOKEN: config.adminToken!,
      SECRETS_KEY: keyringText(config.secretsKeyring!),
    },
    lifecycle: app.get(Lifecycle),
    handoff: app.get(RunHandoff),
    readyTimeoutMs: POOL_READY_TIMEOUT_MS,
    metricsTimeoutMs: POOL_METRICS_TIMEOUT_MS,
  });
  app.get(MetricsService).addPeers(() => pool.metrics());
  await pool.start();
  return pool;
}

async function readOrCreateAdminToken(dataDir: string): Promise<string> {
  const path = join(resolve(dataDir), 'admin-token');
  if (existsSync(path)) return (await readFile(path, 'utf8')).trim();
  await mkdir(resolve(dataDir), { recursive: true });
  const token = randomBytes(24).toString('base64url');
  await writeFile(path, token + '\n', { mode: 0o600 });
  return token;
}

function withDeadline(work: Promise<void>, ms: number): Promise<void> {
  return Promise.race([work, new Promise<void>((done) => setTimeout(done, ms).unref())]);
}

function printBanner(
  config: AppConfig,
  url: string,
  embedded: boolean,
  applied: string[],
  pool: WorkerPool | null,
): void {
  const workers = pool
    ? `; the worker role in ${pool.pids.length} process(es) of its own, pid ${pool.pids.join(', ')}`
    : '';
  const lines = [
    `dueline is listening on ${url} (roles: ${[...config.roles].join(',')}${workers})`,
    embedded
      ? `database: embedded PostgreSQL in ${resolve(config.dataDir, 'pg')}`
      : 'database: DATABASE_URL',
    applied.length ? `migrations applied: ${applied.join(', ')}` : 'migrations: up to date',
  ];
  if (config.roles.has('api')) {
    lines.push(`console: ${url}/console  (sign in with a tenant API key)`);
    lines.push(`Swagger UI: ${url}/docs  (OpenAPI: ${url}/docs-json)`);
    lines.push(
      embedded
        ? `admin token (stored in ${resolve(config.dataDir, 'admin-token')}): ${config.adminToken}`
        : 'admin token: the ADMIN_TOKEN you set',
    );
    lines.push(
      `create a tenant: curl -s -X POST ${url}/tenants -H "Authorization: Bearer <admin token>" ` +
        `-H 'Content-Type: application/json' -d '{"name":"acme"}'  -> its apiKey authenticates ` +
        `every other call as "Authorization: Bearer <apiKey>" (in Swagger UI: Authorize)`,
    );
  }
  console.log(lines.join('\n'));
}

main().catch((error: unknown) => {
  if (error instanceof InvalidConfigError) {
    console.error(error.message);
  } else {
    console.error('dueline failed to start:', error instanceof Error ? error.message : error);
  }
  process.exit(1);
});
