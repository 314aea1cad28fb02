import { DataSource } from 'typeorm';
import { MIGRATIONS } from '../../migrations';
import { dataSourceOptions, runMigrations } from '../../src/database';
import { RUN_REASON_CODES } from '../../src/run-vocabulary';
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

  it('keep a run reason to the vocabulary: the database refuses any other code', async () => {
    const dataSource = await new DataSource(dataSourceOptions(db.url, SCHEMA, 1)).initialize();
    try {
      const [{ def }] = await dataSource.query(
        `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
          WHERE conname = 'occurrences_reason_check'`,
      );
      const codes = [...(def as string).matchAll(/'([a-z_]+)'/g)].map((m) => m[1]).sort();
      expect(codes).toEqual([...RUN_REASON_CODES].sort());
      // Foreign keys off for this session (they are triggers): only the CHECK is under test.
      const runner = dataSource.createQueryRunner();
      await runner.query(`SET session_replication_role = replica`);
      const insert = (reason: string) =>
        runner.query(
          `INSERT INTO occurrences (tenant_id, schedule_id, revision, scheduled_at, fires_at,
                                    scheduled_local, state, reason, max_attempts, retry_deadline)
           VALUES (gen_random_uuid(), gen_random_uuid(), 1, now(), now(), 'x', 'SKIPPED', $1, 1,
                   now())`,
          [reason],
        );
      try {
        await expect(insert('overlap')).resolves.toBeDefined();
        await expect(insert('the previous run was slow')).rejects.toThrow(
          /occurrences_reason_check/,
        );
      } finally {
        await runner.release();
      }
    } finally {
      await dataSource.destroy();
    }
  });

  it("backfill each tenant's count of live schedules (ScheduleQuota)", async () => {
    const old = await createTestDatabase({ empty: true });
    try {
      const before = MIGRATIONS.filter((m) => m.name !== 'ScheduleQuota1796070000000');
      expect(before).toHaveLength(MIGRATIONS.length - 1);
      await runMigrations(old.url, { entities: SCHEMA.entities, migrations: before });
      const dataSource = await new DataSource(dataSourceOptions(old.url, SCHEMA, 1)).initialize();
      try {
        const tenant = async (name: string): Promise<string> =>
          (
            await dataSource.query(
              `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second,
                                    max_concurrent_runs)
               VALUES ($1, 100, 10, 10) RETURNING id`,
              [name],
            )
          )[0].id;
        const busy = await tenant('busy');
        const idle = await tenant('idle');
        const statuses = ['active', 'active', 'paused', 'cancelled', 'completed', 'active'];
        for (const status of statuses) {
          await dataSource.query(
            `INSERT INTO schedules (tenant_id, name, target_id, status, kind, cron, timezone,
                                    missed_run_policy, max_catch_up, overlap_policy,
                                    retry_max_attempts, retry_initial_delay_ms,
                                    retry_max_delay_ms, retry_deadline_seconds)
             VALUES ($1, 's', gen_random_uuid(), $2, 'cron', '0 9 * * *', 'UTC', 'latest', 10,
                     'skip', 3, 1000, 300000, 3600)`,
            [busy, status],
          );
        }
        const applied = await migrateDatabase(old.url);
        expect(applied.applied).toEqual(['ScheduleQuota1796070000000']);
        const rows = await dataSource.query(
          'SELECT tenant_id, live FROM tenant_schedule_counts ORDER BY live DESC',
        );
        expect(rows).toEqual([
          { tenant_id: busy, live: 4 },
          { tenant_id: idle, live: 0 },
        ]);
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await old.drop();
    }
  });
});
