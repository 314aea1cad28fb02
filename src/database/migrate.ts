import { DataSource } from 'typeorm';
import { getConstructionPlans } from 'pg-boss';
import { dataSourceOptions } from './data-source-options';
import { PGBOSS_SCHEMA } from '../queue/queue.constants';

/**
 * Arbitrary but fixed: every replica takes this session-level advisory lock before touching the
 * schema, so replicas that start together migrate one after another instead of racing.
 */
const MIGRATION_LOCK_KEY = 7_324_610_001;

export interface MigrationResult {
  applied: string[];
  pgBossInstalled: boolean;
}

/**
 * Applies our pending TypeORM migrations and installs pg-boss's schema (in its own Postgres
 * schema) when it is absent, all under one advisory lock. Later pg-boss upgrades are migrated by
 * pg-boss itself at start, under its own lock.
 */
export async function runMigrations(url: string): Promise<MigrationResult> {
  const dataSource = new DataSource(dataSourceOptions(url, 2));
  await dataSource.initialize();
  const lockRunner = dataSource.createQueryRunner();
  try {
    await lockRunner.connect();
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      const [{ installed }] = await lockRunner.query(
        `SELECT to_regclass($1) IS NOT NULL AS installed`,
        [`${PGBOSS_SCHEMA}.version`],
      );
      if (!installed) await lockRunner.query(getConstructionPlans(PGBOSS_SCHEMA));
      return { applied: applied.map((m) => m.name), pgBossInstalled: !installed };
    } finally {
      await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockRunner.release();
    await dataSource.destroy();
  }
}
