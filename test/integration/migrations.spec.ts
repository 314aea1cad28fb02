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

  /** `work` on a database of its own, migrated to the latest schema; dropped after. */
  async function onLatestSchema(
    work: (dataSource: DataSource, url: string) => Promise<void>,
  ): Promise<void> {
    const fresh = await createTestDatabase({ empty: true });
    try {
      await migrateDatabase(fresh.url);
      const dataSource = await new DataSource(dataSourceOptions(fresh.url, SCHEMA, 1)).initialize();
      try {
        await work(dataSource, fresh.url);
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await fresh.drop();
    }
  }

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

  it('keep runs and attempts partitioned by scheduled_at (the layout the entities cannot state)', async () => {
    const dataSource = await new DataSource(dataSourceOptions(db.url, SCHEMA, 1)).initialize();
    try {
      const rows = await dataSource.query(
        `SELECT c.relname, pg_get_partkeydef(c.oid) AS key FROM pg_class c
          WHERE c.relname IN ('occurrences', 'attempts') AND c.relkind = 'p' ORDER BY c.relname`,
      );
      expect(rows).toEqual([
        { relname: 'attempts', key: 'RANGE (scheduled_at)' },
        { relname: 'occurrences', key: 'RANGE (scheduled_at)' },
      ]);
    } finally {
      await dataSource.destroy();
    }
  });

  it('trade two run indexes for the identity key and one holding index, and back (OneHoldingIndex, HistoryByIdentity)', () =>
    onLatestSchema(async (dataSource, url) => {
      // The parent's indexes (each partition has its own copy) and the identity key's columns.
      const layout = async () => ({
        indexes: (
          await dataSource.query(
            `SELECT indexname FROM pg_indexes
                WHERE tablename = 'occurrences' AND indexname LIKE 'occurrences_%'
                ORDER BY indexname`,
          )
        ).map((row: { indexname: string }) => row.indexname),
        identity: (
          await dataSource.query(
            `SELECT pg_get_constraintdef(oid) AS def FROM pg_constraint
                WHERE conname = 'occurrences_identity_key'`,
          )
        )[0].def,
      });
      const latest = await layout();
      expect(latest.indexes).toContain('occurrences_holding_idx');
      expect(latest.indexes).not.toContain('occurrences_history_idx');
      expect(latest.identity).toBe('UNIQUE (schedule_id, scheduled_at, revision, origin_key)');

      // AttemptsWithoutRunKey (below) is later; it changes nothing of the runs' indexes.
      for (let i = 0; i < 3; i++) await dataSource.undoLastMigration({ transaction: 'all' });
      const before = await layout();
      expect(before.indexes).toEqual(
        expect.arrayContaining([
          'occurrences_history_idx',
          'occurrences_holding_by_target_idx',
          'occurrences_holding_by_tenant_idx',
        ]),
      );
      expect(before.indexes).not.toContain('occurrences_holding_idx');
      expect(before.identity).toBe('UNIQUE (schedule_id, revision, scheduled_at, origin_key)');

      const again = await migrateDatabase(url);
      expect(again.applied).toEqual([
        'OneHoldingIndex1796680000000',
        'HistoryByIdentity1796690000000',
        'AttemptsWithoutRunKey1796700000000',
      ]);
      expect(await layout()).toEqual(latest);
    }));

  it('drop the key from attempts to their run, and put it back (AttemptsWithoutRunKey)', () =>
    onLatestSchema(async (dataSource, url) => {
      const keysOfAttempts = async () =>
        (
          await dataSource.query(
            `SELECT conname FROM pg_constraint
                WHERE conrelid = 'attempts'::regclass AND contype = 'f' AND conparentid = 0
                ORDER BY conname`,
          )
        ).map((row: { conname: string }) => row.conname);
      expect(await keysOfAttempts()).toEqual([]);

      await dataSource.undoLastMigration({ transaction: 'all' });
      expect(await keysOfAttempts()).toEqual(['attempts_run_id_fkey']);

      const again = await migrateDatabase(url);
      expect(again.applied).toEqual(['AttemptsWithoutRunKey1796700000000']);
      expect(await keysOfAttempts()).toEqual([]);
    }));

  it('move existing runs and attempts into the partitioned layout without loss, and back (PartitionedHistory)', async () => {
    const old = await createTestDatabase({ empty: true });
    try {
      const before = MIGRATIONS.filter((m) => m.name !== 'PartitionedHistory1796600000000');
      expect(before).toHaveLength(MIGRATIONS.length - 1);
      await runMigrations(old.url, { entities: SCHEMA.entities, migrations: before });
      const dataSource = await new DataSource(dataSourceOptions(old.url, SCHEMA, 1)).initialize();
      try {
        const [{ id: tenant }] = await dataSource.query(
          `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second,
                                max_concurrent_runs)
           VALUES ('t', 100, 10, 10) RETURNING id`,
        );
        const [{ id: schedule }] = await dataSource.query(
          `INSERT INTO schedules (tenant_id, name, target_id, status, kind, cron, timezone,
                                  missed_run_policy, max_catch_up, overlap_policy,
                                  retry_max_attempts, retry_initial_delay_ms,
                                  retry_max_delay_ms, retry_deadline_seconds)
           VALUES ($1, 's', gen_random_uuid(), 'active', 'cron', '0 9 * * *', 'UTC', 'latest', 10,
                   'skip', 3, 1000, 300000, 3600) RETURNING id`,
          [tenant],
        );
        // Runs 10 days back, yesterday, now and a year ahead; every one with two attempts.
        for (const offset of ['-10 days', '-1 day', '0', '365 days']) {
          const [{ id: run }] = await dataSource.query(
            `INSERT INTO occurrences (tenant_id, schedule_id, revision, scheduled_at, fires_at,
                                      scheduled_local, state, max_attempts, retry_deadline)
             VALUES ($1, $2, 1, now() + $3::interval, now() + $3::interval, 'x', 'SUCCEEDED', 3,
                     now()) RETURNING id`,
            [tenant, schedule, offset],
          );
          for (const n of [1, 2]) {
            await dataSource.query(
              `INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token)
               VALUES ($1, $2::int, $3, 'w', $2::bigint)`,
              [run, n, tenant],
            );
          }
        }
        const snapshot = async () => ({
          runs: await dataSource.query(
            `SELECT id, scheduled_at, state FROM occurrences ORDER BY scheduled_at`,
          ),
          attempts: await dataSource.query(
            `SELECT run_id, attempt_no, fencing_token FROM attempts ORDER BY run_id, attempt_no`,
          ),
        });
        const original = await snapshot();
        expect(original.runs).toHaveLength(4);

        const applied = await migrateDatabase(old.url);
        expect(applied.applied).toEqual(['PartitionedHistory1796600000000']);
        expect(await snapshot()).toEqual(original);
        const placed = await dataSource.query(
          `SELECT o.tableoid::regclass::text AS runs, a.tableoid::regclass::text AS attempts
             FROM occurrences o JOIN attempts a ON a.run_id = o.id AND a.scheduled_at = o.scheduled_at
            WHERE a.attempt_no = 1 ORDER BY o.scheduled_at`,
        );
        // The past in one range partition (with its attempts), today and later in DEFAULT.
        expect(placed[0].runs).toMatch(/^occurrences_p\d{8}_0000$/);
        expect(placed[1].runs).toBe(placed[0].runs);
        expect(placed[1].attempts).toBe(placed[0].runs.replace('occurrences', 'attempts'));
        expect(placed.slice(2).map((p: { runs: string }) => p.runs)).toEqual([
          'occurrences_default',
          'occurrences_default',
        ]);

        await dataSource.undoLastMigration({ transaction: 'all' });
        expect(await snapshot()).toEqual(original);
        const [{ kind }] = await dataSource.query(
          `SELECT relkind::text AS kind FROM pg_class WHERE relname = 'occurrences'`,
        );
        expect(kind).toBe('r');
      } finally {
        await dataSource.destroy();
      }
    } finally {
      await old.drop();
    }
  });
});
