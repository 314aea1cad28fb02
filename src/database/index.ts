export { DatabaseModule } from './database.module';
export {
  dataSourceOptions,
  primaryLocatorFor,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_PRIMARY_CHECK_INTERVAL_MS,
  type ConnectionTuning,
  type SchemaDefinition,
} from './data-source-options';
export {
  parseDatabaseUrl,
  urlFor,
  describeHost,
  InvalidDatabaseUrlError,
  type DatabaseAddress,
  type HostPort,
} from './database-address';
export { runMigrations, type ForeignSchema, type MigrationResult } from './migrate';
export {
  DEFAULT_POOL_IDLE_MS,
  PrimaryClient,
  primaryPoolOptions,
  primarySocket,
} from './primary-client';
export { PreparingPrimaryClient } from './preparing-client';
export { NoWritableHostError, PrimaryLocator, ReadOnlyServerError } from './primary-locator';
export { PrimaryProbe, PROBE_APPLICATION_NAME } from './primary-probe';
export { databaseRoundTrips, databaseWaits } from './round-trips';
export { inPartitionsOf, instantBounds, UNBOUNDED, type InstantBounds } from './partition-bounds';
export { SqlRunner, type Row } from './sql-runner';
export { anyRow, rowById, type RowProbe } from './row-probe';
export { failedWith, sqlFailureOf, SQL_STATE, type SqlState } from './sql-state';
export { StatementAfterLastError, type Tx } from './transaction';
export { Transactions } from './transactions';
