import { randomUUID } from 'node:crypto';
import { AdmissionService } from '../../src/admission';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';
import { startTestApp, TestApp } from '../support/test-app';
import {
  ExecutionWorld,
  installJobJournal,
  runEngine,
  startExecutionWorld,
} from './execution.fixtures';
import { carriesRun } from '../support/run-jobs';

/** A target with flow control, on the world's sink, for tenant `apiKey`. */
async function flowTarget(
  w: ExecutionWorld,
  flow: { maxConcurrency?: number; ratePerSecond?: number },
  apiKey = w.tenant.apiKey,
): Promise<string> {
  const res = await w.auth(w.t.http.post('/targets'), apiKey).send({
    name: `target-${randomUUID()}`,
    url: w.sink.url(),
    timeoutMs: 5000,
    ...flow,
  });
  if (res.status !== 201) throw new Error(`target: ${res.status} ${res.text}`);
  expect(res.body).toMatchObject({ ...flow, status: 'active', disabledReason: null });
  return res.body.id;
}

const runsOf = (w: ExecutionWorld, runIds: string[]) =>
  w.db.query(
    `SELECT o.id, o.state, o.reason, o.admitted_at,
            (SELECT count(*)::int FROM pgboss.job j
              WHERE ${carriesRun('o.id', 'j')}) AS jobs,
            (SELECT count(*)::int FROM attempts a WHERE a.run_id = o.id) AS attempts
       FROM occurrences o WHERE o.id = ANY($1::uuid[]) ORDER BY o.scheduled_at`,
    [runIds],
  );

/**
 * The target's budget is a second budget beside the tenant's, decided under the tenant's
 * permit lock, so replicas that claim or admit at the same moment never exceed it.
 */
describe('per-target flow control: the budget across replicas', () => {
  let w: ExecutionWorld;
  let replica: TestApp;

  beforeAll(async () => {
    w = await startExecutionWorld(
      'api',
      {},
      { maxConcurrentRuns: 100, dispatchRatePerSecond: 100 },
    );
    replica = await startTestApp({ ROLES: 'api' }, { database: w.t.database });
  });
  afterAll(async () => {
    await replica.close();
    await w.close();
  });

  it('maxConcurrency: concurrent claims on two replicas take exactly its permits, across schedules; the rest wait with no job', async () => {
    const targetId = await flowTarget(w, { maxConcurrency: 2 });
    const schedules = await Promise.all([1, 2, 3].map(() => w.createSchedule(targetId)));
    const due = Date.now() - 1000;
    const runIds: string[] = [];
    for (let i = 0; i < 6; i++) {
      runIds.push(await w.insertRun(schedules[i % 3], new Date(due - i)));
    }
    const engines = [runEngine(w.t.app), runEngine(replica.app)];
    const results = await Promise.all(
      runIds.map((runId, i) =>
        engines[i % 2].claim(w.tenant.id, runId, `worker-${i}`, { requeue: true }),
      ),
    );
    const claimed = results.filter((r) => r.claimed);
    expect(claimed).toHaveLength(2);
    const refused = results.filter((r) => !r.claimed);
    for (const r of refused) {
      expect(r).toMatchObject({ claimed: false, reason: 'throttled_target', requeuedInMs: null });
    }
    const waiting = (await runsOf(w, runIds)).filter(
      (r: { state: string }) => r.state === 'QUEUED',
    );
    expect(waiting).toHaveLength(4);
    for (const run of waiting)
      expect({ reason: run.reason, jobs: run.jobs }).toEqual({
        reason: 'throttled_target',
        jobs: 0,
      });

    // One run ends: the admitter (either replica's) admits exactly one more, with its job.
    const first = claimed[0];
    if (!first.claimed) throw new Error('unreachable');
    await engines[0].complete(w.tenant.id, first.claim.runId, first.claim.fencingToken, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: true,
    });
    const admitters = [w.t.app.get(AdmissionService), replica.app.get(AdmissionService)];
    const admitted = await Promise.all(admitters.map((a) => a.admitWaiting()));
    expect(admitted.reduce((sum, round) => sum + round.admitted, 0)).toBe(1);
    const after = await runsOf(w, runIds);
    const nowAdmitted = after.filter(
      (r: { state: string; admitted_at: Date | null }) => r.state === 'QUEUED' && r.admitted_at,
    );
    expect(nowAdmitted).toHaveLength(1);
    expect(nowAdmitted[0].jobs).toBe(1);
    // And nothing more while the permits stay taken.
    expect((await admitters[1].admitWaiting()).admitted).toBe(0);
  });

  it('ratePerSecond: runs created together are admitted at most one second of burst, the rest wait throttled_target and drain at the rate', async () => {
    const targetId = await flowTarget(w, { ratePerSecond: 2 });
    const schedules = await Promise.all([1, 2].map(() => w.createSchedule(targetId)));
    const due = Date.now() - 1000;
    const runIds: string[] = [];
    // The bucket is spent from here on: it refills a token every 500 ms after.
    const spentFrom = Date.now();
    for (let i = 0; i < 5; i++) {
      runIds.push(await w.insertRun(schedules[i % 2], new Date(due - i), { publish: true }));
    }
    const runs = await runsOf(w, runIds);
    const admitted = runs.filter((r: { admitted_at: Date | null }) => r.admitted_at !== null);
    expect(admitted).toHaveLength(2);
    const waiting = runs.filter((r: { reason: string }) => r.reason === 'throttled_target');
    expect(waiting).toHaveLength(3);
    for (const run of waiting) expect(run.jobs).toBe(0);
    const admitter = w.t.app.get(AdmissionService);
    // The bucket is empty: an immediate round admits nothing of the target, or on a machine slow
    // enough that a token refilled meanwhile, no more than refilled.
    const immediate = (await admitter.admitWaiting()).admitted;
    expect(immediate).toBeLessThanOrEqual(Math.floor((Date.now() - spentFrom) / 500));
    const started = Date.now();
    await eventually(
      async () => {
        await admitter.admitWaiting();
        const now = await runsOf(w, runIds);
        expect(
          now.filter((r: { admitted_at: Date | null }) => r.admitted_at !== null),
        ).toHaveLength(5);
      },
      { timeoutMs: 5000, intervalMs: 50 },
    );
    // The rest (three, unless the immediate round took one) at two tokens a second: the last
    // not before about half a second a token after the first has passed (900 ms for three).
    expect(Date.now() - started).toBeGreaterThanOrEqual((3 - immediate - 1) * 500 - 100);
  });
});

/** End to end (poller, worker, relay): waiting for a target costs nothing; its answers count. */
describe('per-target flow control: waiting, backoff and 410 end to end', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,worker,relay', { ADMISSION_INTERVAL_MS: '20' });
    // A claimed run's job is deleted at once: the jobs a run ever had are journalled.
    await installJobJournal(w);
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(() => w.close());

  /** Schedules on `targetId`, each with one run due at `at`, created in one request. */
  const schedulesAt = async (targetId: string, count: number, at: Date): Promise<string[]> => {
    const res = await w.auth(w.t.http.post('/schedules/batch')).send({
      items: Array.from({ length: count }, (_, i) => ({
        idempotencyKey: randomUUID(),
        schedule: {
          name: `shared-${i}`,
          targetId,
          runAt: at.toISOString(),
          overlapPolicy: 'allow',
        },
      })),
    });
    expect(res.status).toBe(200);
    return res.body.items.map((item: { schedule: { id: string } }) => item.schedule.id);
  };
  const runsOfSchedules = (schedules: string[]) =>
    w.db.query(
      `SELECT o.id, o.state, o.reason, o.reason_detail,
              (SELECT count(*)::int FROM test_job_journal j WHERE j.run_id = o.id::text) AS jobs,
              (SELECT count(*)::int FROM attempts a WHERE a.run_id = o.id) AS attempts
         FROM occurrences o WHERE o.schedule_id = ANY($1::uuid[]) ORDER BY o.scheduled_at`,
      [schedules],
    );

  it('no churn: runs of many schedules wait for the target with no job, never above its cap, each fetched once', async () => {
    const held = gate();
    let inFlight = 0;
    let maxInFlight = 0;
    w.sink.behave(async () => {
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await held.promise;
      inFlight--;
      return { status: 200 };
    });
    const targetId = await flowTarget(w, { maxConcurrency: 2 });
    const schedules = await schedulesAt(targetId, 6, new Date(Date.now() + 1000));
    await eventually(
      async () => {
        const runs = await runsOfSchedules(schedules);
        expect(runs.filter((r: { state: string }) => r.state === 'RUNNING')).toHaveLength(2);
        const parked = runs.filter((r: { reason: string }) => r.reason === 'throttled_target');
        expect(parked).toHaveLength(4);
        for (const run of parked) expect(run.jobs).toBe(0);
        expect(inFlight).toBe(2);
      },
      { timeoutMs: 10_000 },
    );
    const shown = await w.run(
      (await runsOfSchedules(schedules)).find(
        (r: { reason: string }) => r.reason === 'throttled_target',
      ).id,
    );
    expect(shown).toMatchObject({ state: 'QUEUED', reason: 'throttled_target' });
    held.open();
    const done = await eventually(
      async () => {
        const runs = await runsOfSchedules(schedules);
        expect(runs.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(6);
        return runs;
      },
      { timeoutMs: 15_000 },
    );
    for (const run of done)
      expect({ jobs: run.jobs, attempts: run.attempts }).toEqual({ jobs: 1, attempts: 1 });
    expect(maxInFlight).toBe(2);
  });

  it("Retry-After: a 429 holds back the target's other runs (they wait target_backoff, spending no attempt) until it has passed", async () => {
    const targetId = await flowTarget(w, {});
    const calls: Array<{ runId: string; at: number }> = [];
    let throttled = false;
    w.sink.behave((req) => {
      calls.push({ runId: req.headers['idempotency-key'] as string, at: Date.now() });
      if (!throttled) {
        throttled = true;
        return { status: 429, headers: { 'Retry-After': '2' } };
      }
      return { status: 200 };
    });
    const [first] = await schedulesAt(targetId, 1, new Date(Date.now() + 500));
    const [backoffUntil] = await eventually(async () => {
      const rows = await w.db.query(`SELECT backoff_until FROM targets WHERE id = $1`, [targetId]);
      expect(rows[0].backoff_until).not.toBeNull();
      return [new Date(rows[0].backoff_until).getTime()];
    });
    const target = await w.auth(w.t.http.get(`/targets/${targetId}`));
    expect(new Date(target.body.backoffUntil).getTime()).toBe(backoffUntil);
    // Other schedules of the same target, due now: they wait for the backoff, not a retry each.
    const others = await schedulesAt(targetId, 3, new Date(Date.now() + 200));
    await eventually(async () => {
      const runs = await runsOfSchedules(others);
      expect(runs).toHaveLength(3);
      for (const run of runs) {
        expect({
          state: run.state,
          reason: run.reason,
          jobs: run.jobs,
          attempts: run.attempts,
        }).toEqual({
          state: 'QUEUED',
          reason: 'target_backoff',
          jobs: 0,
          attempts: 0,
        });
      }
    });
    const all = [first, ...others];
    const done = await eventually(
      async () => {
        const runs = await runsOfSchedules(all);
        expect(runs.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(4);
        return runs;
      },
      { timeoutMs: 15_000 },
    );
    const otherRuns = new Set(
      done.filter((r: { id: string }) => r.id !== done[0].id).map((r: { id: string }) => r.id),
    );
    for (const run of done.slice(1)) expect(run.attempts).toBe(1);
    // Nobody called the target again before its Retry-After had passed.
    const later = calls.slice(1);
    expect(later).toHaveLength(4);
    for (const call of later) expect(call.at).toBeGreaterThanOrEqual(backoffUntil - 50);
    expect([...otherRuns].every((id) => later.some((c) => c.runId === id))).toBe(true);
    expect(await w.metric('dueline_target_backoffs_total')).toBeGreaterThanOrEqual(1);
  });

  it('410 Gone disables the target, ends its running and waiting runs FAILED target_gone, until it is re-enabled', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 410, body: { gone: true } };
    });
    const targetId = await flowTarget(w, { maxConcurrency: 1 });
    const schedules = await schedulesAt(targetId, 3, new Date(Date.now() + 800));
    await eventually(
      async () => {
        const runs = await runsOfSchedules(schedules);
        expect(runs.filter((r: { state: string }) => r.state === 'RUNNING')).toHaveLength(1);
        expect(
          runs.filter((r: { reason: string }) => r.reason === 'throttled_target'),
        ).toHaveLength(2);
      },
      { timeoutMs: 10_000 },
    );
    held.open();
    const ended = await eventually(
      async () => {
        const runs = await runsOfSchedules(schedules);
        for (const run of runs)
          expect({ state: run.state, reason: run.reason }).toEqual({
            state: 'FAILED',
            reason: 'target_gone',
          });
        return runs;
      },
      { timeoutMs: 10_000 },
    );
    // One call reached the target; the waiting runs ended without one.
    expect(ended.map((r: { attempts: number }) => r.attempts).sort()).toEqual([0, 0, 1]);
    const target = await w.auth(w.t.http.get(`/targets/${targetId}`));
    expect(target.body.status).toBe('disabled');
    expect(target.body.disabledReason).toMatch(/410 Gone/);
    expect(ended[1].reason_detail).toMatch(/410 Gone/);
    // A run created meanwhile is recorded, and ends at once: the schedule shows why.
    const trigger = await w.auth(w.t.http.post(`/schedules/${schedules[0]}/trigger`));
    expect(trigger.status).toBe(201);
    expect(trigger.body).toMatchObject({ state: 'FAILED', reason: 'target_gone' });
    const schedule = await w.auth(w.t.http.get(`/schedules/${schedules[0]}`));
    const linked = await w.auth(w.t.http.get(schedule.body.links.target));
    expect(linked.body).toMatchObject({ id: targetId, status: 'disabled' });
    expect(await w.metric('dueline_targets_disabled_total')).toBeGreaterThanOrEqual(1);

    // Re-enabled: its runs start again.
    w.sink.behave(() => ({ status: 200 }));
    const patched = await w.auth(w.t.http.patch(`/targets/${targetId}`)).send({ status: 'active' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ status: 'active', disabledReason: null });
    const again = await w.auth(w.t.http.post(`/schedules/${schedules[1]}/trigger`));
    expect(again.status).toBe(201);
    await eventually(async () => {
      expect((await w.run(again.body.id)).state).toBe('SUCCEEDED');
    });
  });

  it('bad flow control input is a 400 problem and writes nothing', async () => {
    const targetId = await flowTarget(w, { maxConcurrency: 3 });
    const before = await w.db.query(`SELECT count(*)::int AS n FROM targets`);
    for (const body of [
      { maxConcurrency: 0 },
      { maxConcurrency: 100_001 },
      { ratePerSecond: 1.5 },
      { ratePerSecond: 'fast' },
    ]) {
      const created = await w.auth(w.t.http.post('/targets')).send({
        name: `bad-${randomUUID()}`,
        url: w.sink.url(),
        ...body,
      });
      expect(created.status).toBe(400);
      expect(created.headers['content-type']).toMatch(/application\/problem\+json/);
      const patched = await w.auth(w.t.http.patch(`/targets/${targetId}`)).send(body);
      expect(patched.status).toBe(400);
    }
    const badStatus = await w.auth(w.t.http.patch(`/targets/${targetId}`)).send({
      status: 'paused',
      maxConcurrency: 5,
    });
    expect(badStatus.status).toBe(400);
    expect(await w.db.query(`SELECT count(*)::int AS n FROM targets`)).toEqual(before);
    const [row] = await w.db.query(
      `SELECT max_concurrency, rate_per_second, status FROM targets WHERE id = $1`,
      [targetId],
    );
    expect(row).toEqual({ max_concurrency: 3, rate_per_second: null, status: 'active' });
    // null removes a limit.
    const cleared = await w
      .auth(w.t.http.patch(`/targets/${targetId}`))
      .send({ maxConcurrency: null });
    expect(cleared.body.maxConcurrency).toBeNull();
  });
});
