export { DatabaseModule } from './database.module';
export { dataSourceOptions, type SchemaDefinition } from './data-source-options';
export { runMigrations, type ForeignSchema, type MigrationResult } from './migrate';
export { SqlRunner, type Row } from './sql-runner';
export type { Tx } from './transaction';
export { Transactions } from './transactions';
