import { Client } from 'pg';
import { verifySignature } from '../../src/delivery/target-signature';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';
import { carriesRun } from '../support/run-jobs';

/**
 * The built-in worker and the lease sweeper against a local HTTP target, one test per row of
 * the reference design's failure table, and the rules around them.
 */
describe('execution: the built-in worker against a real target', () => {
  let w: ExecutionWorld;
  let plainTarget: string;
  let dedupTarget: string;
  const SECRET = `whsec_${Buffer.alloc(32, 11).toString('base64')}`;

  const finalState = (runId: string, state: string, timeoutMs = 10_000) =>
    eventually(
      async () => {
        const run = await w.run(runId);
        expect(run.state).toBe(state);
        return run;
      },
      { timeoutMs },
    );

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker,relay', {}, { maxConcurrentRuns: 2 });
    plainTarget = await w.createTarget({ signingSecret: SECRET });
    dedupTarget = await w.createTarget({ deduplicates: true });
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(() => w.close());

  it('calls the target with the run id as Idempotency-Key, attempt, fence, instant and signature', async () => {
    const schedule = await w.createSchedule(plainTarget, { payload: { report: 'daily' } });
    const runId = await w.trigger(schedule);
    const run = await finalState(runId, 'SUCCEEDED');
    const [req] = w.sink.forRun(runId);
    expect(req.headers).toMatchObject({
      'idempotency-key': runId,
      'x-dueline-run-id': runId,
      'x-dueline-attempt': '1',
      'x-dueline-fencing-token': '1',
      'x-dueline-scheduled-at': run.scheduledAt,
    });
    expect(req.body).toEqual({
      runId,
      scheduleId: schedule,
      scheduledAt: run.scheduledAt,
      attempt: 1,
      fencingToken: 1,
      payload: { report: 'daily' },
    });
    const timestamp = req.headers['x-dueline-timestamp'] as string;
    expect(
      verifySignature(SECRET, timestamp, req.raw, req.headers['x-dueline-signature'] as string),
    ).toBe(true);
    expect(run).toMatchObject({ attemptCount: 1, fencingToken: 1, reason: null, leaseUntil: null });
    expect(run.attempts).toMatchObject([
      { attemptNo: 1, fencingToken: 1, outcome: 'succeeded', httpStatus: 200, error: null },
    ]);
    expect(run.attempts[0].durationMs).toEqual(expect.any(Number));
    expect(new Date(run.attempts[0].startedAt).getTime()).toBeGreaterThanOrEqual(
      new Date(run.scheduledAt).getTime(),
    );
    expect(
      await w.metric('dueline_attempts_total', '{outcome="succeeded"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(
      await w.metric('dueline_target_latency_seconds_count', '{result="response"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('a target failing twice then succeeding: three attempts, one key, rising fencing tokens', async () => {
    w.sink.behave((req) =>
      req.headers['x-dueline-attempt'] === '3'
        ? { status: 200 }
        : { status: 503, body: { busy: true } },
    );
    const runId = await w.trigger(await w.createSchedule(plainTarget));
    const run = await finalState(runId, 'SUCCEEDED');
    const requests = w.sink.forRun(runId);
    expect(requests.map((r) => r.headers['x-dueline-attempt'])).toEqual(['1', '2', '3']);
    expect(requests.map((r) => r.headers['x-dueline-fencing-token'])).toEqual(['1', '2', '3']);
    expect(new Set(requests.map((r) => r.headers['idempotency-key']))).toEqual(new Set([runId]));
    expect(run.attempts.map((a: { outcome: string }) => a.outcome)).toEqual([
      'retryable',
      'retryable',
      'succeeded',
    ]);
    expect(run.attempts[0].error).toMatch(/target responded 503/);
    expect(run.attempts[0].httpStatus).toBe(503);
  });

  it('honours Retry-After before the next attempt', async () => {
    const slowCap = {
      maxAttempts: 2,
      initialDelayMs: 100,
      maxDelayMs: 5000,
      retryDeadlineSeconds: 60,
    };
    w.sink.behave((req) =>
      req.headers['x-dueline-attempt'] === '1'
        ? { status: 429, headers: { 'Retry-After': '1' } }
        : { status: 200 },
    );
    const runId = await w.trigger(await w.createSchedule(plainTarget, { retryPolicy: slowCap }));
    const run = await finalState(runId, 'SUCCEEDED');
    const [first, second] = run.attempts;
    expect(
      new Date(second.startedAt).getTime() - new Date(first.endedAt).getTime(),
    ).toBeGreaterThanOrEqual(990);
  });

  it('a client error fails at once, without a retry', async () => {
    w.sink.behave(() => ({ status: 422, body: { error: 'bad payload' } }));
    const runId = await w.trigger(await w.createSchedule(plainTarget));
    const run = await finalState(runId, 'FAILED');
    expect(w.sink.forRun(runId)).toHaveLength(1);
    expect(run.reason).toBe('target_rejected');
    expect(run.reasonDetail).toMatch(/target responded 422 \(client error\)/);
  });

  describe('target succeeds but the response is lost', () => {
    const loseFirstResponse = () =>
      w.sink.behave((req) =>
        req.headers['x-dueline-attempt'] === '1' ? { destroy: true } : { status: 200 },
      );

    it('deduplicating target: retried with the same Idempotency-Key', async () => {
      loseFirstResponse();
      const runId = await w.trigger(await w.createSchedule(dedupTarget));
      const run = await finalState(runId, 'SUCCEEDED');
      const requests = w.sink.forRun(runId);
      expect(requests).toHaveLength(2);
      expect(requests.map((r) => r.headers['idempotency-key'])).toEqual([runId, runId]);
      expect(run.attempts[0]).toMatchObject({ outcome: 'retryable', httpStatus: null });
      expect(run.attempts[0].error).toMatch(/may have been delivered.*deduplicates/);
    });

    it('otherwise: UNKNOWN, never a blind retry', async () => {
      loseFirstResponse();
      const before = await w.metric('dueline_unknown_outcomes_total');
      const runId = await w.trigger(await w.createSchedule(plainTarget));
      const run = await finalState(runId, 'UNKNOWN');
      expect(run.reason).toBe('outcome_unknown');
      expect(run.reasonDetail).toMatch(/may have been delivered .* does not deduplicate/);
      expect(run.attempts).toMatchObject([{ outcome: 'unknown' }]);
      expect(await w.metric('dueline_unknown_outcomes_total')).toBe(before + 1);
      // Give a blind retry every chance to happen (a later run goes through): there is none.
      w.sink.behave(() => ({ status: 200 }));
      await finalState(await w.trigger(await w.createSchedule(plainTarget)), 'SUCCEEDED');
      expect(w.sink.forRun(runId)).toHaveLength(1);
    });
  });

  it('cancel while an attempt is in flight: aborted at the next heartbeat, CANCELLED with a note', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    try {
      const runId = await w.trigger(await w.createSchedule(plainTarget));
      await eventually(() => expect(w.sink.forRun(runId)).toHaveLength(1));
      const res = await w.auth(w.t.http.post(`/runs/${runId}/cancel`));
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ state: 'RUNNING', inFlight: true });
      const run = await finalState(runId, 'CANCELLED');
      expect(run.reason).toBe('cancelled_by_request');
      expect(run.reasonDetail).toMatch(
        /cancelled while attempt 1 was in flight; its effect may already have happened/,
      );
      expect(run.attempts).toMatchObject([{ outcome: 'cancelled' }]);
      expect(w.sink.aborted.map((r) => r.headers['idempotency-key'])).toContain(runId);
    } finally {
      held.open();
    }
  });

  it('a worker that loses its lease mid-call aborts the call and writes nothing', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    try {
      const runId = await w.trigger(await w.createSchedule(plainTarget));
      await eventually(() => expect(w.sink.forRun(runId)).toHaveLength(1));
      // Another holder's claim, as far as the fence can tell.
      await w.db.query('UPDATE occurrences SET fencing_token = fencing_token + 1 WHERE id = $1', [
        runId,
      ]);
      await eventually(() =>
        expect(w.sink.aborted.map((r) => r.headers['idempotency-key'])).toContain(runId),
      );
      const staleBefore = await w.metric('dueline_stale_completions_total');
      held.open();
      // Once the worker has let go of the job (deleted once its run was claimed): nothing
      // written, still RUNNING under the new token, attempt 1 not ended, nothing stale.
      await eventually(async () => {
        const jobs = await w.db.query(`SELECT state FROM pgboss.job WHERE ${carriesRun('$1')}`, [
          runId,
        ]);
        expect(jobs.map((j: { state: string }) => j.state)).toEqual([]);
      });
      const [attempt] = await w.db.query(
        'SELECT outcome, ended_at FROM attempts WHERE run_id = $1',
        [runId],
      );
      expect(attempt).toEqual({ outcome: null, ended_at: null });
      expect(await w.run(runId)).toMatchObject({ state: 'RUNNING', fencingToken: 2 });
      expect(await w.metric('dueline_stale_completions_total')).toBe(staleBefore);
      await w.db.query(
        `UPDATE occurrences SET state = 'CANCELLED', finished_at = now() WHERE id = $1`,
        [runId],
      );
    } finally {
      held.open();
    }
  });

  it('never early: a job delivered before the instant is put back and runs at the instant', async () => {
    const schedule = await w.createSchedule(plainTarget);
    const due = new Date(Date.now() + 1500);
    const runId = await w.insertRun(schedule, due, { publish: true }); // its job is fetchable at once
    const run = await finalState(runId, 'SUCCEEDED');
    const [req] = w.sink.forRun(runId);
    expect(req).toBeDefined();
    expect(new Date(run.attempts[0].startedAt).getTime()).toBeGreaterThanOrEqual(due.getTime());
    expect(
      await w.metric('dueline_unclaimable_jobs_total', '{reason="not_due"}'),
    ).toBeGreaterThanOrEqual(1);
  });

  it('tenant concurrency: never more than maxConcurrentRuns calls in flight; the others wait, visibly', async () => {
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
    const schedule = await w.createSchedule(plainTarget);
    const runIds: string[] = [];
    for (let i = 0; i < 5; i++) runIds.push(await w.trigger(schedule));
    await eventually(async () => {
      const runs = await Promise.all(runIds.map((id) => w.run(id)));
      expect(runs.filter((r) => r.state === 'RUNNING')).toHaveLength(2);
      expect(runs.filter((r) => r.reason === 'throttled_concurrency')).toHaveLength(3);
    });
    held.open();
    for (const id of runIds) await finalState(id, 'SUCCEEDED');
    expect(maxInFlight).toBe(2);
  });

  it("overlap 'buffer_one': the waiting run gets its job when the running one ends", async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    const schedule = await w.createSchedule(plainTarget, { overlapPolicy: 'buffer_one' });
    const first = await w.trigger(schedule);
    await eventually(() => expect(w.sink.forRun(first)).toHaveLength(1));
    const second = await w.trigger(schedule);
    await eventually(async () =>
      expect(await w.run(second)).toMatchObject({
        state: 'QUEUED',
        reason: 'waiting_for_previous',
      }),
    );
    held.open();
    await finalState(first, 'SUCCEEDED');
    const run = await finalState(second, 'SUCCEEDED');
    expect(run.attemptCount).toBe(1);
  });

  it('the database going away mid-run: no run lost, none duplicated', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    const schedule = await w.createSchedule(plainTarget);
    const runIds: string[] = [];
    for (let i = 0; i < 2; i++) runIds.push(await w.trigger(schedule));
    await eventually(() => expect(runIds.every((id) => w.sink.forRun(id).length === 1)).toBe(true));
    // Every connection of the app (TypeORM's pool, pg-boss's pool and its LISTEN) is cut.
    const admin = new Client({ connectionString: w.t.database.url });
    await admin.connect();
    try {
      const killed = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      );
      expect(killed.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    held.open();
    for (const id of runIds) await finalState(id, 'SUCCEEDED', 20_000);
    // And it goes on: a run triggered after the outage runs too.
    const after = await w.trigger(schedule);
    await finalState(after, 'SUCCEEDED', 20_000);
    const [{ n }] = await w.db.query(
      'SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1',
      [schedule],
    );
    expect(n).toBe(3);
    for (const id of [...runIds, after]) {
      const run = await w.run(id);
      expect(
        run.attempts.filter((a: { outcome: string }) => a.outcome === 'succeeded'),
      ).toHaveLength(1);
      expect(w.sink.forRun(id)).toHaveLength(run.attemptCount);
    }
  });
});

/** A lease shorter than the contract's defaults: the paused worker's lease runs out mid-test. */
describe('execution: a worker paused beyond its lease', () => {
  let w: ExecutionWorld;
  let dedupTarget: string;

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker,relay', { EXECUTION_LEASE_MS: '800' });
    dedupTarget = await w.createTarget({ deduplicates: true });
  });
  afterAll(() => w.close());

  const finalState = (runId: string, state: string, timeoutMs = 10_000) =>
    eventually(
      async () => {
        const run = await w.run(runId);
        expect(run.state).toBe(state);
        return run;
      },
      { timeoutMs },
    );

  it('a worker paused beyond its lease: a new attempt runs, the old completion is rejected', async () => {
    const schedule = await w.createSchedule(dedupTarget);
    const runId = await w.insertRun(schedule, new Date(Date.now() - 1000)); // no job: the paused worker takes it
    const claim = await w
      .auth(w.t.http.post(`/runs/${runId}/claim`))
      .set('X-Worker-Id', 'paused-worker');
    expect(claim.status).toBe(200);
    // ...and freezes. The sweeper reclaims the run; the built-in worker runs attempt 2.
    const run = await finalState(runId, 'SUCCEEDED');
    expect(w.sink.forRun(runId).map((r) => r.headers['x-dueline-fencing-token'])).toEqual(['2']);
    expect(run.attempts.map((a: { outcome: string }) => a.outcome)).toEqual([
      'lease_lost',
      'succeeded',
    ]);
    const staleBefore = await w.metric('dueline_stale_completions_total');
    const late = await w
      .auth(w.t.http.post(`/runs/${runId}/complete`))
      .send({ fencingToken: claim.body.fencingToken, outcome: 'succeeded' });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ reason: 'stale_fencing_token', currentState: 'SUCCEEDED' });
    expect(await w.metric('dueline_stale_completions_total')).toBe(staleBefore + 1);
    const after = await w.run(runId);
    expect(after.state).toBe('SUCCEEDED');
    expect(after.attempts[0]).toMatchObject({ attemptNo: 1, outcome: 'stale' });
  });
});

describe('execution: completions wait for others to share their transaction (WORKER_WRITE_LINGER_MS)', () => {
  let w: ExecutionWorld;
  beforeAll(async () => {
    // A linger far longer than a second run takes to be triggered and called on any machine.
    w = await startExecutionWorld('api,worker,relay', { WORKER_WRITE_LINGER_MS: '1000' });
  });
  afterAll(() => w.close());

  it('writes two runs ending apart within the linger in one transaction', async () => {
    const target = await w.createTarget();
    const schedule = await w.createSchedule(target);
    const first = await w.trigger(schedule);
    await eventually(async () => expect(w.sink.forRun(first)).toHaveLength(1));
    // The first run's call has ended; its completion is still waiting for company.
    expect((await w.run(first)).state).toBe('RUNNING');
    const second = await w.trigger(schedule);
    const [a, b] = await Promise.all(
      [first, second].map((runId) =>
        eventually(async () => {
          const run = await w.run(runId);
          expect(run.state).toBe('SUCCEEDED');
          return run;
        }),
      ),
    );
    expect(w.sink.forRun(second)).toHaveLength(1);
    // now() is the transaction's start: one transaction wrote both ends.
    expect(b.finishedAt).toBe(a.finishedAt);
    expect(a.finishedAt).not.toBeNull();
  });
});
