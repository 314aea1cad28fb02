import { Client } from 'pg';
import {
  DISPATCH_SCHEDULE_COLUMNS,
  LOCK_SCHEDULES_FOR_DISPATCH,
} from '../../src/schedules/schedules.sql';
import { SCHEDULE_LIMITS } from '../../src/schedules';
import {
  closeTestDatabase,
  connectTestDatabase,
  type TestDatabase,
} from '../support/test-database';

/**
 * The poller reads each due schedule's row under its lock. It reads the columns dispatch plans
 * with, never the payload (up to 64 KiB a schedule, parsed on the poller's event loop for every
 * entry of a batch) nor the labels. The list is written out, so a column added to schedules must
 * be placed on one side or the other.
 */
describe('what dispatch reads of a schedule', () => {
  /** Needed only by the run's call (the claim reads it) or by the API. */
  const NOT_READ_AT_DISPATCH = ['labels', 'payload'];
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => ({ db, client } = await connectTestDatabase()));
  afterAll(() => closeTestDatabase({ db, client }));

  const dispatchColumns = () =>
    DISPATCH_SCHEDULE_COLUMNS.split(',')
      .map((name) => name.trim())
      .sort();

  it('names every column of schedules but the payload and the labels', async () => {
    const { rows } = await client.query<{ column_name: string }>(
      `SELECT column_name FROM information_schema.columns
        WHERE table_schema = current_schema() AND table_name = 'schedules'`,
    );
    const table = rows.map((row) => row.column_name);
    expect(table.length).toBeGreaterThan(NOT_READ_AT_DISPATCH.length);
    expect(dispatchColumns()).toEqual(
      table.filter((name) => !NOT_READ_AT_DISPATCH.includes(name)).sort(),
    );
  });

  it('locks a schedule with a large payload and brings back none of it', async () => {
    const [tenant] = (
      await client.query<{ id: string }>(
        `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
         VALUES ('payload-tenant', 10, 10, 10) RETURNING id`,
      )
    ).rows;
    const [target] = (
      await client.query<{ id: string }>(
        `INSERT INTO targets (tenant_id, name, url) VALUES ($1, 'sink', 'http://127.0.0.1:9/')
         RETURNING id`,
        [tenant!.id],
      )
    ).rows;
    const payload = { blob: 'x'.repeat(SCHEDULE_LIMITS.maxPayloadBytes - 64) };
    const [schedule] = (
      await client.query<{ id: string }>(
        `INSERT INTO schedules (tenant_id, name, target_id, status, kind, run_at, missed_run_policy,
                                max_catch_up, overlap_policy, retry_max_attempts,
                                retry_initial_delay_ms, retry_max_delay_ms,
                                retry_deadline_seconds, payload, labels)
         VALUES ($1, 'big', $2, 'active', 'once', now() + interval '1 hour', 'latest', 1,
                 'allow', 3, 1000, 1000, 3600, $3::jsonb, '{"team": "a"}'::jsonb)
         RETURNING id`,
        [tenant!.id, target!.id, JSON.stringify(payload)],
      )
    ).rows;

    await client.query('BEGIN');
    try {
      const locked = await client.query(LOCK_SCHEDULES_FOR_DISPATCH, [[schedule!.id]]);
      expect(locked.rows).toHaveLength(1);
      expect(locked.fields.map((field) => field.name).sort()).toEqual(dispatchColumns());
      expect(locked.rows[0]).toMatchObject({ id: schedule!.id, kind: 'once', status: 'active' });
      expect(Buffer.byteLength(JSON.stringify(locked.rows[0]))).toBeLessThan(4096);
      // And the row is held: an edit's lock waits, another poller's skips it.
      const other = new Client({ connectionString: db.url });
      await other.connect();
      try {
        await other.query('BEGIN');
        const skipped = await other.query(LOCK_SCHEDULES_FOR_DISPATCH, [[schedule!.id]]);
        expect(skipped.rows).toHaveLength(0);
        await other.query('ROLLBACK');
      } finally {
        await other.end();
      }
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
