import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import {
  ADMIT_WAITING,
  CLAIM_ADMITTED_RUNS,
  CLAIM_RUNS,
  FLEET_BACKLOG,
  NEW_RUN_BUDGETS,
  LOCK_SCHEDULES_OF_CLAIMS,
  SKIP_PAST_START_DEADLINE,
  TENANT_BUDGETS,
  WAITING_DEMANDS,
} from '../../src/admission/admission.sql';
import { END_ATTEMPTS, LIST_ATTEMPTS, MARK_ATTEMPT_STALE } from '../../src/attempts/attempts.sql';
import { instantBounds } from '../../src/database';
import { RECORD_RUN_EVENTS } from '../../src/events/events.sql';
import {
  FINISH_UNDER_FENCE,
  LOCK_EXPIRED_LEASES,
  LOCK_HELD_RUNS,
  LOCK_SCHEDULES_OF_RUNS,
  TENANTS_WITH_EXPIRED_LEASES,
  TRANSITION_UNDER_FENCE,
} from '../../src/execution/execution.sql';
import { CONCURRENT_POLICIES } from '../../src/overlap';
import { explainExecute, type PlanNode, rowsRead } from '../support/plan-rows';
import { genericPlanClient, oneTimeSchedulesBySql, tenantBySql } from '../support/sql-seed';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** Rows that scans of `table` (the runs' partitions by default) produced or filtered out. */
const runRowsRead = (node: PlanNode, table = 'occurrences'): number => rowsRead(node, table);

/**
 * The engine's statements are prepared once per connection, and Postgres keeps a generic plan
 * for each. One made while the runs' partitions were empty (a new database, a new partition not
 * analysed yet) must still read only what the statement is about once a flood has arrived: a
 * tenant's permits, the fleet's backlog and the deadline skip never read the runs waiting in the
 * ledger. Before the migration StatsProofRunIndexes such a plan counted a tenant's permits
 * through all of its runs, and the backlog through every QUEUED run.
 */
describe('run index plans made while the history was empty', () => {
  let db: TestDatabase;
  let client: Client;
  let tenantId: string;
  let holdingIds: string[];
  /** Forty of the flood's schedules, all of one target. */
  let floodScheduleIds: string[];
  let targetId: string;
  let dueAt: Date;
  const WAITING = 3000;
  const HOLDING = 10;

  beforeAll(async () => {
    db = await createTestDatabase();
    // A generic plan, made now, while the partitions are empty and have never been analysed.
    client = await genericPlanClient(db.url);
    tenantId = await tenantBySql(client, 'flooding', {
      maxActiveSchedules: 100_000,
      dispatchRatePerSecond: 200,
      maxConcurrentRuns: 50,
    });
    await client.query({ name: 'budgets', text: TENANT_BUDGETS, values: [[tenantId]] });
    await client.query({ name: 'demands', text: WAITING_DEMANDS, values: [[tenantId], 500] });
    await client.query({ name: 'backlog', text: FLEET_BACKLOG, values: [] });
    await client.query({
      name: 'new_run_budgets',
      text: NEW_RUN_BUDGETS,
      values: [[tenantId], [], true],
    });
    await client.query('BEGIN');
    await client.query({ name: 'deadline', text: SKIP_PAST_START_DEADLINE, values: [500] });
    await client.query({ name: 'admit', text: ADMIT_WAITING, values: [tenantId, 500, 500, 200] });
    dueAt = new Date(Date.now() - 1000);
    await client.query({
      name: 'lock_schedules',
      text: LOCK_SCHEDULES_OF_CLAIMS,
      values: [[], CONCURRENT_POLICIES, ...instantBounds([dueAt])],
    });
    await client.query({
      name: 'claim_admitted',
      text: CLAIM_ADMITTED_RUNS,
      values: [[], [], 'worker', 60_000, CONCURRENT_POLICIES, ...instantBounds([dueAt])],
    });
    await client.query({
      name: 'claim',
      text: CLAIM_RUNS,
      values: [[], [], 'worker', 60_000, CONCURRENT_POLICIES, ...instantBounds([dueAt])],
    });
    const bounds = instantBounds([dueAt]);
    await client.query({
      name: 'lock_held',
      text: LOCK_HELD_RUNS,
      values: [[], [], [], ...bounds],
    });
    await client.query({
      name: 'lock_run_schedules',
      text: LOCK_SCHEDULES_OF_RUNS,
      values: [[], ...bounds],
    });
    await client.query({
      name: 'transition',
      text: TRANSITION_UNDER_FENCE,
      values: [[], [], [], [], [], [], ...bounds],
    });
    await client.query({
      name: 'finish',
      text: FINISH_UNDER_FENCE,
      values: [[], [], [], [], [], [], ...bounds],
    });
    await client.query({
      name: 'end_attempts',
      text: END_ATTEMPTS,
      values: [[], [], [], [], [], [], [], [], [], ...bounds],
    });
    await client.query({ name: 'run_events', text: RECORD_RUN_EVENTS, values: [[]] });
    await client.query({
      name: 'mark_stale',
      text: MARK_ATTEMPT_STALE,
      values: [tenantId, randomUUID(), 1, null, null],
    });
    await client.query({
      name: 'list_attempts',
      text: LIST_ATTEMPTS,
      values: [tenantId, randomUUID()],
    });
    await client.query({
      name: 'expired_tenants',
      text: TENANTS_WITH_EXPIRED_LEASES,
      values: [50],
    });
    await client.query({
      name: 'lock_expired',
      text: LOCK_EXPIRED_LEASES,
      values: [tenantId, 50],
    });
    await client.query('ROLLBACK');
    // Then the flood: thousands of runs waiting for the tenant's budget, a few admitted (holding
    // permits, their jobs on the way to a worker), each of a one-time schedule of its own.
    targetId = await oneTimeSchedulesBySql(client, tenantId, HOLDING + WAITING, dueAt, 'flood');

    await client.query(
      `INSERT INTO occurrences (tenant_id, schedule_id, target_id, revision, scheduled_at,
                                scheduled_local, state, reason, max_attempts, retry_deadline,
                                fires_at, admitted_at, start_deadline)
       SELECT $1, s.id, s.target_id, 1, $3, '2026-12-01T00:00:00', 'QUEUED',
              CASE WHEN s.n <= $2::int THEN NULL ELSE 'throttled_rate' END, 3,
              now() + interval '1 day', $3, CASE WHEN s.n <= $2::int THEN now() END,
              now() + interval '1 hour'
         FROM (SELECT id, target_id, row_number() OVER (ORDER BY name) AS n
                 FROM schedules WHERE tenant_id = $1) s`,
      [tenantId, HOLDING, dueAt],
    );
    const holding = await client.query<{ id: string }>(
      `SELECT id FROM occurrences WHERE tenant_id = $1 AND admitted_at IS NOT NULL`,
      [tenantId],
    );
    holdingIds = holding.rows.map((row) => row.id);
    const flood = await client.query<{ id: string }>(
      `SELECT id FROM schedules WHERE tenant_id = $1 LIMIT 40`,
      [tenantId],
    );
    floodScheduleIds = flood.rows.map((row) => row.id);
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  const explain = (statement: string, values: string): Promise<PlanNode> =>
    explainExecute(client, `${statement}${values}`);

  it('counts a tenant permits from the runs holding them alone', async () => {
    const budgets = await explain('budgets', `('{${tenantId}}')`);
    expect(runRowsRead(budgets)).toBeLessThan(4 * HOLDING);
    const demands = await explain('demands', `('{${tenantId}}', 500)`);
    // The demand reads the waiting list only as far as the tenant can afford (40 free permits),
    // and the permits from the runs holding them.
    expect(runRowsRead(demands)).toBeLessThan(40 + 4 * HOLDING);
  });

  it('admits from the waiting list reading about what it admits', async () => {
    await client.query('BEGIN');
    try {
      const admit = await explain('admit', `('${tenantId}', 500, 500, 200)`);
      // 40 free permits: the 40 first waiting runs are read and admitted, and the permits
      // counted from the 10 holding runs; the flood behind them is not read.
      expect(runRowsRead(admit)).toBeLessThan(300);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('claims a batch by its runs alone, not by the partition', async () => {
    await client.query('BEGIN');
    try {
      const [from, until] = instantBounds([dueAt]);
      const ids = `'{${holdingIds.join(',')}}'`;
      const tenants = `'{${holdingIds.map(() => tenantId).join(',')}}'`;
      const bound = (b: Date | string) => `'${b instanceof Date ? b.toISOString() : b}'`;
      const policies = `'{${CONCURRENT_POLICIES.join(',')}}'`;
      // The claim of admitted runs alone (the worker's batch), and the one that may also take
      // runs not admitted yet (the one-run claim's): each on the same admitted runs.
      for (const [statement, values] of [
        ['claim_admitted', `(${ids}, ${tenants}, 'worker', 60000, ${policies}, `],
        ['claim', `(${ids}, ${tenants}, 'worker', 60000, ${policies}, `],
      ]) {
        await client.query('SAVEPOINT claiming');
        const claim = await explain(statement, `${values}${bound(from)}, ${bound(until)})`);
        expect({ statement, claimed: claim['Actual Rows'] }).toEqual({
          statement,
          claimed: HOLDING,
        });
        // Each run read once to judge it and once to update it (and the batch's overlap checks).
        expect(runRowsRead(claim)).toBeLessThan(6 * HOLDING);
        expect(runRowsRead(claim, 'schedules')).toBeLessThan(4 * HOLDING);
        await client.query('ROLLBACK TO SAVEPOINT claiming');
      }
      const locks = await explain(
        'lock_schedules',
        `(${ids}, '{${CONCURRENT_POLICIES.join(',')}}', ${bound(from)}, ${bound(until)})`,
      );
      expect(runRowsRead(locks)).toBe(HOLDING);
      expect(runRowsRead(locks, 'schedules')).toBe(HOLDING);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('counts the fleet backlog from admitted runs alone', async () => {
    const backlog = await explain('backlog', '');
    expect(runRowsRead(backlog)).toBeLessThan(4 * HOLDING);
  });

  it("reads a new run's budgets (tenant, targets, fleet) in one statement as each would alone", async () => {
    const budgets = await explain('new_run_budgets', `('{${tenantId}}', '{}', true)`);
    // The tenant's permits from its holding runs, the fleet's backlog from the admitted runs:
    // the flood's waiting runs are not read.
    expect(runRowsRead(budgets)).toBeLessThan(8 * HOLDING);
  });

  /** `explain`s under a concurrency limit of the flood's target, rolled back after. */
  const withTargetLimit = async <T>(work: () => Promise<T>): Promise<T> => {
    await client.query('BEGIN');
    try {
      // A concurrency limit: the target's permits are counted (without one they are not).
      await client.query(`UPDATE targets SET max_concurrency = 50 WHERE id = $1`, [targetId]);
      return await work();
    } finally {
      await client.query('ROLLBACK');
    }
  };

  it("counts a target's permits from the runs holding them alone, once a batch", async () => {
    const budgets = await withTargetLimit(() =>
      explain('new_run_budgets', `('{${tenantId}}', '{${floodScheduleIds.join(',')}}', true)`),
    );
    // The tenant's permits, the target's (the one index of permit holders, by tenant and target)
    // once for the batch's 40 runs of it, and the fleet's backlog: the flood's waiting runs are
    // not read, nor the holding runs once per run (40 × 10).
    expect(runRowsRead(budgets)).toBeLessThan(10 * HOLDING);
  });

  it("admits from the waiting list counting a limited target's permits once", async () => {
    const admit = await withTargetLimit(() => explain('admit', `('${tenantId}', 500, 500, 200)`));
    // As without a target limit: 40 runs picked and judged, the target's 10 permit holders
    // counted once (per picked run, 530 rows were read).
    expect(runRowsRead(admit)).toBeLessThan(300);
  });

  it('finds runs past their start deadline without reading the waiting ones', async () => {
    await client.query('BEGIN');
    try {
      const skip = await explain('deadline', '(500)');
      expect(runRowsRead(skip)).toBeLessThan(4 * HOLDING);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it("sweeps a tenant's expired leases reading only running runs", async () => {
    await client.query('BEGIN');
    try {
      // The ten holding runs are RUNNING, four of them past their lease; the flood waits.
      await client.query(
        `UPDATE occurrences SET state = 'RUNNING', fencing_token = 1, attempt_count = 1,
                                lease_until = now() + CASE WHEN id = ANY($2::uuid[])
                                  THEN interval '-1 minute' ELSE interval '1 minute' END
          WHERE id = ANY($1::uuid[])`,
        [holdingIds, holdingIds.slice(0, 4)],
      );
      const tenants = await explain('expired_tenants', '(50)');
      expect(tenants['Actual Rows']).toBe(1);
      expect(runRowsRead(tenants)).toBeLessThan(2 * HOLDING);
      const expired = await explain('lock_expired', `('${tenantId}', 50)`);
      expect(expired['Actual Rows']).toBe(4);
      // Not the tenant's 3,010 runs (its search index), nor the partition.
      expect(runRowsRead(expired)).toBeLessThan(2 * HOLDING);
    } finally {
      await client.query('ROLLBACK');
    }
  });

  it('completes a batch by its runs and attempts alone, not by the partitions', async () => {
    await client.query('BEGIN');
    try {
      // Every run of the flood has had an attempt and is RUNNING under token 1 (a fleet busy
      // with 3,010 calls, or a running-runs index full of entries of runs that ended since its
      // last vacuum): the batch completes ten of them.
      await client.query(
        `INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token,
                               scheduled_at)
         SELECT id, 1, tenant_id, 'worker', 1, scheduled_at FROM occurrences WHERE tenant_id = $1`,
        [tenantId],
      );
      await client.query(
        `UPDATE occurrences SET state = 'RUNNING', fencing_token = 1, attempt_count = 1,
                                lease_until = now() + interval '1 minute'
          WHERE tenant_id = $1`,
        [tenantId],
      );
      const [from, until] = instantBounds([dueAt]).map((b) => `'${new Date(b).toISOString()}'`);
      const ids = `'{${holdingIds.join(',')}}'`;
      const list = (value: string) => `'{${holdingIds.map(() => value).join(',')}}'`;
      const read = async (statement: string, values: string, table = 'occurrences') =>
        runRowsRead(await explain(statement, values), table);
      // Each statement reads about the batch's runs (a probe each, the row it updates at the
      // address the probe read, the row it returns), never the other 3,000 RUNNING runs of the
      // instant or their attempts.
      expect(
        await read('lock_held', `(${ids}, ${list(tenantId)}, ${list('1')}, ${from}, ${until})`),
      ).toBeLessThanOrEqual(3 * HOLDING);
      expect(await read('lock_run_schedules', `(${ids}, ${from}, ${until})`)).toBeLessThanOrEqual(
        3 * HOLDING,
      );
      expect(await read('run_events', `(${ids})`)).toBeLessThanOrEqual(3 * HOLDING);
      expect(
        await read(
          'transition',
          `(${ids}, ${list('1')}, ${list('SUCCEEDED')}, ${list('NULL')}, ${list('NULL')}, ` +
            `${list('NULL')}, ${from}, ${until})`,
        ),
      ).toBeLessThanOrEqual(3 * HOLDING);
      expect(
        await read(
          'finish',
          `(${ids}, ${list(tenantId)}, ${list('1')}, ${list('SUCCEEDED')}, ${list('NULL')}, ` +
            `${list('NULL')}, ${from}, ${until})`,
        ),
      ).toBeLessThanOrEqual(3 * HOLDING);
      expect(
        await read(
          'end_attempts',
          `(${ids}, ${list('1')}, ${list('succeeded')}, ${list('200')}, ${list('5')}, ` +
            `${list('NULL')}, ${list('NULL')}, ${list('NULL')}, ${list('NULL')}, ${from}, ${until})`,
          'attempts',
        ),
      ).toBeLessThanOrEqual(3 * HOLDING);
      const one = `'${tenantId}', '${holdingIds[0]}'`;
      expect(await read('mark_stale', `(${one}, 1, NULL, NULL)`, 'attempts')).toBeLessThan(3);
      expect(await read('list_attempts', `(${one})`, 'attempts')).toBeLessThan(3);
    } finally {
      await client.query('ROLLBACK');
    }
  });
});
