import type { DataSourceOptions, MixedList } from 'typeorm';
import { parseDatabaseUrl, urlFor } from './database-address';
import { DEFAULT_POOL_IDLE_MS, primaryPoolOptions } from './primary-client';
import { PrimaryLocator, type LocatorLogger } from './primary-locator';
import { PrimaryProbe } from './primary-probe';

/** The entities and migrations of the whole application (see src/schema.ts). */
export interface SchemaDefinition {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
}

/** How long a connection (and a probe of a server) may take before the server counts as away. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How often the server in use is asked whether it is still the primary. */
export const DEFAULT_PRIMARY_CHECK_INTERVAL_MS = 1_000;

export interface ConnectionTuning {
  connectTimeoutMs: number;
  primaryCheckIntervalMs: number;
  /** How long a pooled connection may sit idle before it is closed (DATABASE_POOL_IDLE_SECONDS). */
  poolIdleMs?: number;
}

const DEFAULT_TUNING: ConnectionTuning = {
  connectTimeoutMs: DEFAULT_CONNECT_TIMEOUT_MS,
  primaryCheckIntervalMs: DEFAULT_PRIMARY_CHECK_INTERVAL_MS,
};

/** The locator of a DATABASE_URL's writable server (one per process, shared by every pool). */
export function primaryLocatorFor(
  url: string,
  tuning: ConnectionTuning = DEFAULT_TUNING,
  logger?: LocatorLogger,
): PrimaryLocator {
  const address = parseDatabaseUrl(url);
  return new PrimaryLocator(address, new PrimaryProbe(address, tuning.connectTimeoutMs), {
    checkIntervalMs: tuning.primaryCheckIntervalMs,
    logger,
  });
}

/**
 * One definition of how we talk to Postgres, shared by the app, the migration command and the
 * tests. The schema only ever changes through reviewed migrations (synchronize stays off). The
 * URL may name several hosts: every pooled connection goes to the locator's writable server.
 */
export function dataSourceOptions(
  url: string,
  schema: SchemaDefinition,
  poolSize = 20,
  locator: PrimaryLocator = primaryLocatorFor(url),
  {
    connectTimeoutMs = DEFAULT_CONNECT_TIMEOUT_MS,
    poolIdleMs = DEFAULT_POOL_IDLE_MS,
  }: Partial<Pick<ConnectionTuning, 'connectTimeoutMs' | 'poolIdleMs'>> = {},
): DataSourceOptions {
  return {
    type: 'postgres',
    // TypeORM reads the credentials and parameters from a single-host URL; the host itself is
    // chosen per connection by PrimaryClient.
    url: urlFor(locator.address, locator.address.hosts[0]),
    entities: schema.entities,
    migrations: schema.migrations,
    synchronize: false,
    // gen_random_uuid() is built into PostgreSQL 13+: no extension to install.
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    migrationsRun: false,
    migrationsTableName: 'typeorm_migrations',
    logging: false,
    poolSize,
    applicationName: 'dueline',
    extra: {
      ...primaryPoolOptions(locator, connectTimeoutMs, poolIdleMs),
      // The ledger's statements are prepared (sql-runner.ts) and written for index scans whatever
      // their parameters: plan them once per connection rather than at every call (the planner's
      // automatic choice kept re-planning the admission statements, several ms each).
      options: '-c plan_cache_mode=force_generic_plan',
      // A statement is written as soon as it is called, not after the answer to the one before:
      // a transaction's BEGIN travels with its first statement (SqlRunner.transaction), and
      // statements a repository sends together share a wait. Answers still come, and statements
      // still run, in the order written.
      pipeline: true,
    },
  };
}
