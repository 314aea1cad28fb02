import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from '../src/embedded-postgres';
import { migrateDatabase } from '../src/schema';

export interface BenchDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * The Postgres every scenario runs on: DATABASE_URL's server when set, else an embedded one in a
 * temporary directory (removed at the end). Each scenario gets a fresh, migrated database on it.
 */
export class PgServer {
  private constructor(
    readonly url: string,
    readonly kind: 'embedded' | 'external',
    /** The postmaster, when it runs on this machine and we can find it; null otherwise. */
    readonly postmasterPid: number | null,
    readonly version: string,
    private readonly cleanup: () => Promise<void>,
    /**
     * Whether pg_stat_statements answers in the server's admin database (`url`): the embedded
     * server preloads it; an external one only if its operator did.
     */
    readonly statementStats: boolean,
  ) {}

  static async start(log: (line: string) => void): Promise<PgServer> {
    const external = process.env.DATABASE_URL?.trim();
    if (external) {
      const dataDir = await scalar(external, `SELECT current_setting('data_directory')`).catch(
        () => null,
      );
      const pid = dataDir ? postmasterPidIn(dataDir) : null;
      const version = await scalar(external, `SELECT version()`);
      log(`postgres: DATABASE_URL (${version.split(' on ')[0]}; postmaster pid ${pid ?? 'n/a'})`);
      const statements = await enableStatementStats(external, log);
      return new PgServer(external, 'external', pid, version, async () => undefined, statements);
    }
    const dir = mkdtempSync(join(tmpdir(), 'dueline-bench-'));
    chmodSync(dir, 0o755); // as root the server runs as `postgres` and must reach its directory
    log(`postgres: starting an embedded server in ${dir}`);
    const embedded = await startEmbeddedPostgres({
      dataDir: dir,
      log: () => undefined,
      // Statement counts for the cost of one occurrence (bench/occurrence-cost.ts).
      settings: {
        shared_preload_libraries: 'pg_stat_statements',
        'pg_stat_statements.track_planning': 'on',
        // Room for every statement of every scenario's database (`all` creates 16 or more, each
        // with statements of its own): at the default 5,000 the later scenarios could evict
        // entries while they ran, undercounting their statements and taking the extension's
        // exclusive lock on every eviction.
        'pg_stat_statements.max': '20000',
      },
    });
    // On Ctrl-C the embedded-postgres package stops the server and exits on its own; the
    // directory must still go.
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const pid = postmasterPidIn(join(dir, 'pg'));
    const version = await scalar(embedded.url, `SELECT version()`);
    log(`postgres: embedded ${version.split(' on ')[0]} (postmaster pid ${pid ?? 'n/a'})`);
    const statements = await enableStatementStats(embedded.url, log);
    return new PgServer(
      embedded.url,
      'embedded',
      pid,
      version,
      async () => {
        await embedded.stop();
        rmSync(dir, { recursive: true, force: true });
      },
      statements,
    );
  }

  /** CREATE DATABASE, then our migrations (which also install pg-boss's schema). */
  async freshDatabase(label: string): Promise<BenchDatabase> {
    const name = `dueline_bench_${label.replace(/[^a-z0-9]/gi, '_').toLowerCase()}_${Date.now()}`;
    await this.admin(`CREATE DATABASE ${name}`);
    const url = withDatabase(this.url, name);
    await migrateDatabase(url);
    return {
      name,
      url,
      drop: () => this.admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
    };
  }

  async stop(): Promise<void> {
    await this.cleanup();
  }

  private async admin(sql: string): Promise<void> {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  }
}

export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** One statement on a connection of its own, closed after (the harness's readings). */
export async function queryOnce<Row extends object>(
  url: string,
  sql: string,
  parameters: readonly unknown[] = [],
): Promise<Row[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(sql, [...parameters])).rows;
  } finally {
    await client.end();
  }
}

async function scalar(url: string, sql: string): Promise<string> {
  const [row] = await queryOnce<{ value: string }>(url, `SELECT (${sql}) AS value`);
  return String(row.value);
}

/**
 * Installs pg_stat_statements in the admin database (its view covers every database of the
 * cluster, by dbid), so the databases under test stay exactly as the migrations leave them.
 */
async function enableStatementStats(url: string, log: (line: string) => void): Promise<boolean> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    await client.query('SELECT count(*) FROM pg_stat_statements');
    return true;
  } catch (error) {
    log(
      `postgres: no pg_stat_statements (${error instanceof Error ? error.message : String(error)}); ` +
        'statements are counted as transactions',
    );
    return false;
  } finally {
    await client.end();
  }
}

/** The first line of postmaster.pid is the postmaster's pid (readable when we run as root). */
function postmasterPidIn(dataDir: string): number | null {
  const file = join(dataDir, 'postmaster.pid');
  try {
    if (!existsSync(file)) return null;
    const pid = Number(readFileSync(file, 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}
