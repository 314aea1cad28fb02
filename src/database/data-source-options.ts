import type { DataSourceOptions, MixedList } from 'typeorm';

/** The entities and migrations of the whole application (see src/schema.ts). */
export interface SchemaDefinition {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function>;
}

/**
 * One definition of how we talk to Postgres, shared by the app, the migration command and the
 * tests. The schema only ever changes through reviewed migrations (synchronize stays off).
 */
export function dataSourceOptions(
  url: string,
  schema: SchemaDefinition,
  poolSize = 20,
): DataSourceOptions {
  return {
    type: 'postgres',
    url,
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
    extra: { connectionTimeoutMillis: 10_000 },
  };
}
