import { DataSource } from 'typeorm';
import { dataSourceOptions, type SchemaDefinition } from './data-source-options';

/**
 * Arbitrary but fixed: every replica takes this session-level advisory lock before touching the
 * schema, so replicas that start together migrate one after another instead of racing.
 */
const MIGRATION_LOCK_KEY = 7_324_610_001;

/** A schema another library owns (pg-boss), installed under the same lock when absent. */
export interface ForeignSchema {
  name: string;
  /** A table whose presence means the schema is installed (`schema.table`). */
  installedWhen: string;
  construction: () => string;
}

export interface MigrationResult {
  applied: string[];
  installed: string[];
}

/**
 * Applies our pending TypeORM migrations and installs the foreign schemas that are absent, all
 * under one advisory lock. Later upgrades of a foreign schema are its library's own business.
 */
export async function runMigrations(
  url: string,
  schema: SchemaDefinition,
  foreign: readonly ForeignSchema[] = [],
): Promise<MigrationResult> {
  const dataSource = new DataSource(dataSourceOptions(url, schema, 2));
  await dataSource.initialize();
  const lockRunner = dataSource.createQueryRunner();
  try {
    await lockRunner.connect();
    await lockRunner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
    try {
      const applied = await dataSource.runMigrations({ transaction: 'each' });
      const installed: string[] = [];
      for (const other of foreign) {
        const [{ present }] = await lockRunner.query(
          `SELECT to_regclass($1) IS NOT NULL AS present`,
          [other.installedWhen],
        );
        if (!present) {
          await lockRunner.query(other.construction());
          installed.push(other.name);
        }
      }
      return { applied: applied.map((m) => m.name), installed };
    } finally {
      await lockRunner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
    }
  } finally {
    await lockRunner.release();
    await dataSource.destroy();
  }
}
