import { DataSource } from 'typeorm';
import { dataSourceOptions } from '../../src/database';
import { migrateDatabase, SCHEMA } from '../../src/schema';
import { createTestDatabase, TestDatabase } from '../support/test-database';

describe('migrations', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase({ empty: true });
  });
  afterAll(() => db.drop());

  it('apply once even when several replicas start together (advisory lock)', async () => {
    const results = await Promise.all([
      migrateDatabase(db.url),
      migrateDatabase(db.url),
      migrateDatabase(db.url),
    ]);
    const applied = results.flatMap((r) => r.applied);
    const names = new Set(applied);
    expect(applied.length).toBe(names.size);
    expect(names.size).toBeGreaterThan(0);
    expect(results.filter((r) => r.installed.includes('pg-boss'))).toHaveLength(1);
  });

  it('agree with the entities: generating a migration yields nothing', async () => {
    const dataSource = await new DataSource(dataSourceOptions(db.url, SCHEMA, 1)).initialize();
    try {
      const sql = await dataSource.driver.createSchemaBuilder().log();
      expect(sql.upQueries.map((q) => q.query)).toEqual([]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('keep pg-boss in its own schema', async () => {
    const dataSource = await new DataSource(dataSourceOptions(db.url, SCHEMA, 1)).initialize();
    try {
      const rows = await dataSource.query(
        `SELECT table_schema, count(*)::int AS n FROM information_schema.tables
          WHERE table_schema IN ('public', 'pgboss') GROUP BY table_schema`,
      );
      const bySchema = Object.fromEntries(
        rows.map((r: { table_schema: string; n: number }) => [r.table_schema, r.n]),
      );
      expect(bySchema.pgboss).toBeGreaterThan(0);
      const inPublic = await dataSource.query(
        `SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public' AND table_name LIKE 'job%'`,
      );
      expect(inPublic[0].n).toBe(0);
    } finally {
      await dataSource.destroy();
    }
  });
});
