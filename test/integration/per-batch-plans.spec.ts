import { Client } from 'pg';
import {
  NEW_RUN_BUDGETS,
  SPEND_TOKENS_OF_NEW_RUNS,
  TARGET_BUDGETS,
  TENANT_BUDGETS,
} from '../../src/admission/admission.sql';
import { LOCK_SCHEDULE_COUNTS, RELEASE_SCHEDULES } from '../../src/schedules/schedule-quota.sql';
import { ADVANCE_SCHEDULES, LOCK_SCHEDULES_FOR_DISPATCH } from '../../src/schedules/schedules.sql';
import { SELECT_TARGETS_FOR_DISPATCH } from '../../src/targets/targets.sql';
import { type PlanNode, rowsRead } from '../support/plan-rows';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * What the poller and the worker run for every batch must cost what the batch names, not what
 * the tables hold. Each statement here is run in a generic plan (what a pooled connection
 * settles on) against 2,000 tenants, each with a target and a schedule, for a batch naming five
 * of them: a probe or two per row named. Before these statements probed their rows one by one
 * (rowById), a generic plan of several of them scanned every tenant, target, schedule or counter
 * for each batch (a table of 2,000 read to find five).
 */
describe('per-batch statements read the rows their batch names', () => {
  const TENANTS = 2000;
  const BATCH = 5;
  /** A row may be probed more than once (a tenant's row and its token bucket's refill rate). */
  const READS = 2 * BATCH;
  let db: TestDatabase;
  let client: Client;
  let picked: Array<{ tenant_id: string; target_id: string; schedule_id: string }>;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
       SELECT 'tenant-' || i, 100, 10, 10 FROM generate_series(1, $1::int) AS i`,
      [TENANTS],
    );
    await client.query(
      `INSERT INTO targets (tenant_id, name, url) SELECT id, 'sink', 'http://127.0.0.1:9/' FROM tenants`,
    );
    await client.query(
      `INSERT INTO schedules (tenant_id, name, target_id, status, kind, run_at, missed_run_policy,
                              max_catch_up, overlap_policy, retry_max_attempts,
                              retry_initial_delay_ms, retry_max_delay_ms, retry_deadline_seconds)
       SELECT tenant_id, 'once', id, 'active', 'once', now() + interval '1 hour', 'run_once', 1,
              'allow', 3, 1000, 1000, 3600
         FROM targets`,
    );
    await client.query(
      `INSERT INTO tenant_schedule_counts (tenant_id, live) SELECT id, 1 FROM tenants`,
    );
    for (const table of ['tenants', 'targets', 'schedules', 'tenant_schedule_counts']) {
      await client.query(`ANALYZE ${table}`);
    }
    const rows = await client.query<{ tenant_id: string; target_id: string; schedule_id: string }>(
      `SELECT s.tenant_id, s.target_id, s.id AS schedule_id FROM schedules s ORDER BY s.id LIMIT $1`,
      [BATCH],
    );
    picked = rows.rows;
    await client.query(`SET plan_cache_mode = force_generic_plan`);
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  /** A parameter as an SQL literal: an array, or a text (JSON). */
  const literal = (value: unknown) =>
    Array.isArray(value) ? `'{${value.join(',')}}'` : `'${String(value).replaceAll("'", "''")}'`;

  /** EXPLAIN ANALYZE of `sql` prepared as `name`, in a transaction rolled back after it. */
  const plan = async (name: string, sql: string, values: unknown[]): Promise<PlanNode> => {
    await client.query('BEGIN');
    try {
      // Prepared by a first execution, whose effects are undone before the measured one.
      await client.query('SAVEPOINT prepared');
      await client.query({ name, text: sql, values });
      await client.query('ROLLBACK TO SAVEPOINT prepared');
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name}(${values.map(literal).join(', ')})`,
      );
      return rows[0]['QUERY PLAN'][0].Plan;
    } finally {
      await client.query('ROLLBACK');
    }
  };

  const tenants = () => picked.map((p) => p.tenant_id);

  it("the worker's read of a batch's targets finds them and reads no others", async () => {
    const values = [tenants(), picked.map((p) => p.target_id)];
    const found = await client.query(SELECT_TARGETS_FOR_DISPATCH, values);
    expect(found.rows.map((row: { id: string }) => row.id).sort()).toEqual(
      picked.map((p) => p.target_id).sort(),
    );
    const read = await plan('targets_read', SELECT_TARGETS_FOR_DISPATCH, values);
    expect(rowsRead(read, 'targets')).toBeLessThanOrEqual(READS);
  });

  it('the poller locks the schedules of its batch and no others', async () => {
    const locked = await plan('lock_schedules', LOCK_SCHEDULES_FOR_DISPATCH, [
      picked.map((p) => p.schedule_id),
    ]);
    expect(locked['Actual Rows']).toBe(BATCH);
    expect(rowsRead(locked, 'schedules')).toBeLessThanOrEqual(READS);
  });

  it('the poller moves on the schedules of its batch and no others', async () => {
    const moves = picked.map((p) => ({
      id: p.schedule_id,
      revision: 1,
      next_due_at: null,
      status: 'completed',
      runs: 1,
    }));
    const advanced = await plan('advance', ADVANCE_SCHEDULES, [
      JSON.stringify(moves),
      moves.map((move) => move.id),
    ]);
    // One row per tenant whose schedules completed: each of the five is another tenant's.
    expect(advanced['Actual Rows']).toBe(BATCH);
    expect(rowsRead(advanced, 'schedules')).toBeLessThanOrEqual(READS);
  });

  it('the release of quota slots locks and changes the counters of its tenants alone', async () => {
    const locked = await plan('lock_counts', LOCK_SCHEDULE_COUNTS, [[...tenants(), tenants()[0]]]);
    expect(locked['Actual Rows']).toBe(BATCH);
    expect(rowsRead(locked, 'tenant_schedule_counts')).toBeLessThanOrEqual(READS);
    const released = await plan('release', RELEASE_SCHEDULES, [tenants(), picked.map(() => 1)]);
    expect(rowsRead(released, 'tenant_schedule_counts')).toBeLessThanOrEqual(READS);
  });

  it('the budgets of new runs read their tenants, schedules and targets alone', async () => {
    const tenantBudgets = await plan('tenant_budgets', TENANT_BUDGETS, [
      [...tenants(), tenants()[0]],
    ]);
    expect(tenantBudgets['Actual Rows']).toBe(BATCH);
    expect(rowsRead(tenantBudgets, 'tenants')).toBeLessThanOrEqual(READS);
    const schedules = picked.map((p) => p.schedule_id);
    await client.query(`UPDATE targets SET rate_per_second = 5 WHERE id = $1`, [
      picked[0].target_id,
    ]);
    try {
      const targetBudgets = await plan('target_budgets', TARGET_BUDGETS, [schedules]);
      // Only the target with a limit has a budget to report.
      expect(targetBudgets['Actual Rows']).toBe(1);
      expect(rowsRead(targetBudgets, 'targets')).toBeLessThanOrEqual(READS);
      expect(rowsRead(targetBudgets, 'schedules')).toBeLessThanOrEqual(READS);
      const both = await client.query<{ tenants: unknown[]; targets: unknown[] }>(NEW_RUN_BUDGETS, [
        tenants(),
        schedules,
        false,
      ]);
      expect(both.rows[0].tenants).toHaveLength(BATCH);
      expect(both.rows[0].targets).toHaveLength(1);
    } finally {
      await client.query(`UPDATE targets SET rate_per_second = NULL WHERE id = $1`, [
        picked[0].target_id,
      ]);
    }
  });

  it('the token spend of new runs reads their tenants alone', async () => {
    // No run rows: the spend is the tenants' alone; the targets' reads find nothing to read.
    const spent = await plan('spend_new', SPEND_TOKENS_OF_NEW_RUNS, [
      tenants(),
      [picked[0].schedule_id],
      ['2026-12-03T00:00:00Z'],
    ]);
    expect(rowsRead(spent, 'tenants')).toBeLessThanOrEqual(READS);
    expect(rowsRead(spent, 'targets')).toBe(0);
  });
});
