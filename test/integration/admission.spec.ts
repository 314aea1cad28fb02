import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';
import { ExecutionWorld, installJobJournal, startExecutionWorld } from './execution.fixtures';

/**
 * Admission ahead of the queue, end to end (poller, worker and relay running): a run its tenant
 * cannot afford yet waits in the ledger with no queue job, and is admitted in order, at the
 * tenant's rate and within its concurrency, by the relay's admitter.
 */
describe('admission: waiting runs cost nothing and start in order', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,worker,relay', { ADMISSION_INTERVAL_MS: '20' });
    // A claimed run's job is deleted at once: the jobs a run ever had are journalled.
    await installJobJournal(w);
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(() => w.close());

  /** A tenant of its own with a target on the sink, and one-time schedules due at `at`. */
  const flood = async (quotas: Record<string, number>, count: number, at: Date, body = {}) => {
    const tenant = await w.t.createTenant(`flood-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 10_000,
      ...quotas,
    });
    const targetId = await w.createTarget({ apiKey: tenant.apiKey });
    // One request for them all, so a busy machine cannot make the instant pass meanwhile.
    const res = await w.auth(w.t.http.post('/schedules/batch'), tenant.apiKey).send({
      items: Array.from({ length: count }, (_, i) => ({
        idempotencyKey: randomUUID(),
        schedule: {
          name: `flood-${i}`,
          targetId,
          runAt: at.toISOString(),
          overlapPolicy: 'allow',
          ...body,
        },
      })),
    });
    if (
      res.status !== 200 ||
      res.body.items.some((item: { status: number }) => item.status !== 201)
    ) {
      throw new Error(`flood: ${res.status} ${res.text}`);
    }
    const schedules: string[] = res.body.items.map(
      (item: { schedule: { id: string } }) => item.schedule.id,
    );
    return { tenant, schedules };
  };
  const runsOf = async (schedules: string[]) =>
    w.db.query(
      `SELECT o.id, o.state, o.reason, o.admitted_at, o.priority, o.schedule_id,
              (SELECT count(*)::int FROM test_job_journal j
                WHERE j.queue = 'dueline-runs' AND j.run_id = o.id::text) AS jobs,
              (SELECT count(*)::int FROM attempts a WHERE a.run_id = o.id) AS attempts
         FROM occurrences o WHERE o.schedule_id = ANY($1::uuid[])`,
      [schedules],
    );
  const arrivals = () => {
    const at = new Map<string, number>();
    w.sink.behave((req) => {
      at.set(req.headers['idempotency-key'] as string, Date.now());
      return { status: 200 };
    });
    return at;
  };

  it('rate: a flood waits in the ledger with no job, drains at the rate, each run fetched once', async () => {
    const at = arrivals();
    const due = new Date(Date.now() + 1500);
    const { tenant, schedules } = await flood({ dispatchRatePerSecond: 10 }, 30, due);
    // Right after the instant: the bucket's ten are admitted, twenty wait without a job.
    const waiting = await eventually(async () => {
      const runs = await runsOf(schedules);
      expect(runs).toHaveLength(30);
      const parked = runs.filter((r: { reason: string }) => r.reason === 'throttled_rate');
      expect(parked.length).toBeGreaterThanOrEqual(10);
      return parked;
    });
    for (const run of waiting) expect(run.jobs).toBe(0);
    const shown = await w.auth(
      w.t.http.get(`/runs/${waiting[waiting.length - 1].id}`),
      tenant.apiKey,
    );
    if (shown.body.state === 'QUEUED' && shown.body.reason === 'throttled_rate') {
      expect(new Date(shown.body.estimatedStartAt).getTime()).toBeGreaterThan(Date.now() - 1000);
    }
    const done = await eventually(
      async () => {
        const runs = await runsOf(schedules);
        expect(runs.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(30);
        return runs;
      },
      { timeoutMs: 20_000 },
    );
    // No churn: every run got exactly one queue job and one attempt, however long it waited.
    for (const run of done)
      expect({ jobs: run.jobs, attempts: run.attempts }).toEqual({ jobs: 1, attempts: 1 });
    // Never faster than the rate: 10 in the bucket, then 10 a second for the other 20, so the
    // last is admitted 2 s after the first (a token every 100 ms; the database clock, not the
    // sink's, whose arrivals also carry each call's own delay).
    expect(at.size).toBe(30);
    const admitted = done.map((r: { admitted_at: Date }) => r.admitted_at.getTime());
    expect(Math.max(...admitted) - Math.min(...admitted)).toBeGreaterThanOrEqual(1900);
    expect(await w.metric('dueline_admission_admitted_total')).toBeGreaterThanOrEqual(20);
  });

  it('concurrency: never more than maxConcurrentRuns in flight; the rest wait, then start as permits free', async () => {
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
    const { schedules } = await flood({ maxConcurrentRuns: 2 }, 6, new Date(Date.now() + 1000));
    await eventually(async () => {
      const runs = await runsOf(schedules);
      expect(runs.filter((r: { state: string }) => r.state === 'RUNNING')).toHaveLength(2);
      const parked = runs.filter((r: { reason: string }) => r.reason === 'throttled_concurrency');
      expect(parked).toHaveLength(4);
      for (const run of parked) expect(run.jobs).toBe(0);
      expect(inFlight).toBe(2);
    });
    held.open();
    const done = await eventually(
      async () => {
        const runs = await runsOf(schedules);
        expect(runs.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(6);
        return runs;
      },
      { timeoutMs: 15_000 },
    );
    for (const run of done) expect(run.jobs).toBe(1);
    expect(maxInFlight).toBe(2);
  });

  it('priority: within a tenant, waiting high runs are admitted before normal and low ones', async () => {
    const at = arrivals();
    const due = new Date(Date.now() + 1500);
    const tenant = await w.t.createTenant(`prio-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 100,
      // One token at a time: admissions, and so deliveries, are strictly one after another.
      dispatchRatePerSecond: 1,
    });
    const targetId = await w.createTarget({ apiKey: tenant.apiKey });
    const make = (priority: string) =>
      w.createSchedule(targetId, { runAt: due.toISOString(), priority }, tenant.apiKey);
    const low = [await make('low'), await make('low'), await make('low')];
    const normal = [await make('normal'), await make('normal')];
    const high = [await make('high')];
    const all = [...low, ...normal, ...high];
    const runs = await eventually(
      async () => {
        const rows = await runsOf(all);
        expect(rows.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(6);
        return rows;
      },
      { timeoutMs: 20_000 },
    );
    const order = runs
      .sort((a: { id: string }, b: { id: string }) => at.get(a.id)! - at.get(b.id)!)
      .map((r: { schedule_id: string }) =>
        high.includes(r.schedule_id) ? 'high' : normal.includes(r.schedule_id) ? 'normal' : 'low',
      );
    expect(order).toEqual(['high', 'normal', 'normal', 'low', 'low', 'low']);
  });

  it('startDeadlineSeconds: a run that cannot start in time is SKIPPED and never called', async () => {
    const at = arrivals();
    const due = new Date(Date.now() + 1500);
    const { schedules } = await flood({ dispatchRatePerSecond: 1 }, 5, due, {
      startDeadlineSeconds: 1,
    });
    const before = await w.metric('dueline_deadline_skips_total');
    const runs = await eventually(
      async () => {
        const rows = await runsOf(schedules);
        expect(
          rows.filter((r: { state: string }) => ['QUEUED', 'RUNNING'].includes(r.state)),
        ).toHaveLength(0);
        expect(rows).toHaveLength(5);
        return rows;
      },
      { timeoutMs: 15_000 },
    );
    const skipped = runs.filter((r: { state: string }) => r.state === 'SKIPPED');
    // One token at the instant, one more within the deadline at the most.
    expect(skipped.length).toBeGreaterThanOrEqual(3);
    for (const run of skipped) {
      expect(run).toMatchObject({ reason: 'deadline_exceeded', attempts: 0 });
      expect(at.has(run.id)).toBe(false);
    }
    expect(await w.metric('dueline_deadline_skips_total')).toBe(before + skipped.length);
  });
});
