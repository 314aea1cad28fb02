import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { createApp } from './app.factory';
import { AppConfig, loadConfig, InvalidConfigError } from './config';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres';
import { migrateDatabase } from './schema';
import { parseKeyring, readOrCreateKeyFile } from './secrets';
import { startTracing } from './tracing';

/**
 * Boot order: validate config, start the embedded Postgres when no DATABASE_URL is given,
 * migrate under the advisory lock, then start the roles and listen. SIGTERM/SIGINT drain within
 * SHUTDOWN_TIMEOUT_MS and exit 0. This file is the only one that talks to the console directly:
 * it runs before the structured logger exists.
 */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
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
  const app = await createApp(resolved);
  await app.listen(resolved.port, '0.0.0.0');
  const url = (await app.getUrl()).replace('[::1]', 'localhost').replace('0.0.0.0', 'localhost');
  printBanner(resolved, url, embedded !== null, migrations.applied);

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    console.log(`dueline: ${signal} received, draining (up to ${resolved.shutdownTimeoutMs} ms)`);
    const deadline = setTimeout(() => {
      console.error('dueline: shutdown deadline passed, exiting');
      process.exit(1);
    }, resolved.shutdownTimeoutMs + 5000);
    deadline.unref();
    try {
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

function printBanner(config: AppConfig, url: string, embedded: boolean, applied: string[]): void {
  const lines = [
    `dueline is listening on ${url} (roles: ${[...config.roles].join(',')})`,
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
