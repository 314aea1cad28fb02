import { DataSourceOptions } from 'typeorm';
import { ENTITIES } from './entities';
import { MIGRATIONS } from '../../migrations';

/**
 * One definition of how we talk to Postgres, shared by the app, the migration command and the
 * tests. The schema only ever changes through reviewed migrations (synchronize stays off).
 */
export function dataSourceOptions(url: string, poolSize = 20): DataSourceOptions {
  return {
    type: 'postgres',
    url,
    entities: ENTITIES,
    migrations: MIGRATIONS,
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
