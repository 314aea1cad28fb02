import { randomUUID } from 'node:crypto';
import { Transactions } from '../../src/database';
import { RUN_QUEUES, RunJobsRepository } from '../../src/queue';
import { RelayService } from '../../src/relay';
import { FIND_ORPHANED_QUEUED_RUNS } from '../../src/relay/outbox.sql';
import { planNodes, type PlanNode, rowsRead } from '../support/plan-rows';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';
import { carriesAnyRun, carriesRun } from '../support/run-jobs';

describe('relay: outbox repair and housekeeping', () => {
  let w: ExecutionWorld;
  let relay: RelayService;

  beforeAll(async () => {
    w = await startExecutionWorld('api,relay');
    relay = w.t.app.get(RelayService);
  });
  afterAll(() => w.close());

  const jobsFor = async (runId: string): Promise<number> =>
    (
      await w.db.query(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'dueline-runs' AND ${carriesRun('$1')}`,
        [runId],
      )
    )[0].n;

  it('republishes a QUEUED run whose job is gone, once, and leaves fresh runs alone', async () => {
    const targetId = await w.createTarget();
    const scheduleId = await w.createSchedule(targetId, { overlapPolicy: 'allow' });
    // Admitted, and then their jobs are lost.
    const orphan = await w.insertRun(scheduleId, new Date(Date.now() - 60_000), { publish: true });
    const fresh = await w.insertRun(scheduleId, new Date(Date.now() - 1_000), { publish: true });
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesAnyRun('$1::text[]')}`, [
      [orphan, fresh],
    ]);
    await w.db.query(
      `UPDATE occurrences SET created_at = now() - interval '2 minutes' WHERE id = $1`,
      [orphan],
    );
    await relay.tick();
    expect(await jobsFor(orphan)).toBe(1);
    expect(await jobsFor(fresh)).toBe(0);
    await relay.tick();
    expect(await jobsFor(orphan)).toBe(1);
    expect((await w.t.http.get('/metrics')).text).toMatch(/dueline_runs_republished_total 1\b/);
  });

  it("republishes a QUEUED run whose job a dead worker holds 'active', but not a fresh active one", async () => {
    const scheduleId = await w.createSchedule(await w.createTarget(), { overlapPolicy: 'allow' });
    const held = await w.insertRun(scheduleId, new Date(Date.now() - 120_000), { publish: true });
    await w.db.query(
      `UPDATE occurrences SET created_at = now() - interval '2 minutes' WHERE id = $1`,
      [held],
    );
    const activate = (age: string) =>
      w.db.query(
        `UPDATE pgboss.job SET state = 'active', started_on = now() - $2::interval
          WHERE name = 'dueline-runs' AND ${carriesRun('$1')}`,
        [held, age],
      );
    await activate('5 seconds');
    await relay.tick();
    expect(await jobsFor(held)).toBe(1);
    await activate('5 minutes');
    await relay.tick();
    expect(await jobsFor(held)).toBe(2);
  });

  it('keeps Idempotency-Keys for 24 hours, then prunes them', async () => {
    const keep = randomUUID();
    const prune = randomUUID();
    const scheduleId = await w.createSchedule(await w.createTarget());
    for (const [key, age] of [
      [keep, '23 hours'],
      [prune, '25 hours'],
    ]) {
      await w.db.query(
        `INSERT INTO idempotency_keys (tenant_id, key, request_sha256, schedule_id, created_at)
         VALUES ($1, $2, '\\x00', $3, now() - $4::interval)`,
        [w.tenant.id, key, scheduleId, age],
      );
    }
    await relay.tick();
    const left = await w.db.query(`SELECT key FROM idempotency_keys WHERE key = ANY($1)`, [
      [keep, prune],
    ]);
    expect(left.map((r: { key: string }) => r.key)).toEqual([keep]);
  });

  it("never republishes a run that waits for its tenant's budget or its turn: it has no job on purpose", async () => {
    // A tenant whose one permit is taken, so the admitter (also a relay duty) cannot take them.
    const tenant = await w.t.createTenant(`full-${randomUUID().slice(0, 8)}`, {
      maxConcurrentRuns: 1,
      maxActiveSchedules: 100,
    });
    const scheduleId = await w.createSchedule(
      await w.createTarget({ apiKey: tenant.apiKey }),
      { overlapPolicy: 'allow' },
      tenant.apiKey,
    );
    await w.insertRun(scheduleId, new Date(Date.now() - 200_000), { publish: true });
    const waiting = await Promise.all(
      ['throttled_rate', 'throttled_concurrency', 'waiting_for_previous'].map(async (reason) => {
        const runId = await w.insertRun(scheduleId, new Date(Date.now() - 120_000 - reason.length));
        await w.db.query(
          `UPDATE occurrences SET reason = $2, created_at = now() - interval '2 minutes'
            WHERE id = $1`,
          [runId, reason],
        );
        return runId;
      }),
    );
    await relay.tick();
    for (const runId of waiting) expect(await jobsFor(runId)).toBe(0);
  });

  it('reads the live jobs once, not once per waiting run, however many runs they carry', async () => {
    const targetId = await w.createTarget();
    const scheduleId = await w.createSchedule(targetId, { overlapPolicy: 'allow' });
    // Waiting runs with their jobs (none orphaned), beside jobs carrying 2,000 other runs: more
    // run ids than a small work_mem hashes, where a per-candidate search reads them all each time.
    for (let i = 0; i < 20; i++) {
      await w.insertRun(scheduleId, new Date(Date.now() - 120_000 + i), { publish: true });
    }
    const others = Array.from({ length: 2000 }, () => ({
      runId: randomUUID(),
      tenantId: randomUUID(),
      scheduledAt: new Date(),
    }));
    await w.t.app.get(Transactions).run((tx) => w.t.app.get(RunJobsRepository).publish(tx, others));
    // Statistics as a busy queue has them (autovacuum analyses it), not an empty one's.
    await w.db.query(`ANALYZE pgboss.job`);
    const [{ jobs }] = await w.db.query(
      `SELECT count(*)::int AS jobs FROM pgboss.job WHERE name = ANY($1::text[])`,
      [RUN_QUEUES],
    );
    const plan = await w.db.transaction(async (manager) => {
      await manager.query(`SET LOCAL work_mem = '64kB'`);
      const [row] = await manager.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${FIND_ORPHANED_QUEUED_RUNS}`,
        [0, 500, 60, RUN_QUEUES],
      );
      return row['QUERY PLAN'][0].Plan as PlanNode;
    });
    // Each job row once (a NOT IN over the carried run ids read them once per waiting run here).
    // The waiting runs are matched against the live jobs' runs by a hash anti join (the jobs
    // read once, spilling to disk when large), never a subplan run for each waiting run (a NOT IN
    // over the carried run ids: past work_mem, a search of the whole list per candidate).
    const nodes = planNodes(plan);
    expect(nodes.filter((node) => node['Subplan Name'] !== undefined)).toEqual([]);
    expect(
      nodes.some(
        (node) => node['Node Type'] === 'Hash Join' && /Anti/.test(node['Join Type'] ?? ''),
      ),
    ).toBe(true);
    expect(rowsRead(plan, 'job')).toBeLessThanOrEqual(2 * jobs);
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesAnyRun('$1::text[]')}`, [
      others.map((run) => run.runId),
    ]);
  });
});
