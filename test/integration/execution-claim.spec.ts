import { OccurrencesService } from '../../src/occurrences';
import type { Claim, ClaimResult } from '../../src/admission';
import {
  ExecutionWorld,
  pendingJobs,
  startExecutionWorld,
  runEngine,
  type RunEngine,
} from './execution.fixtures';
import { carriesRun } from '../support/run-jobs';

/**
 * The claim, the fence, the sweeper and cancellation, driven through the service the built-in
 * worker and the HTTP worker contract share (no worker or relay running: the test is the worker).
 */
describe('execution: claims, fences, leases', () => {
  let w: ExecutionWorld;
  let execution: RunEngine;
  let occurrences: OccurrencesService;
  let targetId: string;
  let dedupTargetId: string;

  const claimed = (result: ClaimResult): Claim => {
    if (!result.claimed) throw new Error(`not claimed: ${result.reason}`);
    return result.claim;
  };
  const row = async (runId: string) =>
    (await w.db.query('SELECT * FROM occurrences WHERE id = $1', [runId]))[0];
  const attempts = (runId: string) =>
    w.db.query('SELECT * FROM attempts WHERE run_id = $1 ORDER BY attempt_no', [runId]);
  const expireLease = (runId: string) =>
    w.db.query(`UPDATE occurrences SET lease_until = now() - interval '1 second' WHERE id = $1`, [
      runId,
    ]);
  const makeRetryDue = (runId: string) =>
    w.db.query(`UPDATE occurrences SET next_attempt_at = now() WHERE id = $1`, [runId]);

  beforeAll(async () => {
    w = await startExecutionWorld('api', {}, { maxConcurrentRuns: 100 });
    execution = runEngine(w.t.app);
    occurrences = w.t.app.get(OccurrencesService);
    targetId = await w.createTarget();
    dedupTargetId = await w.createTarget({ deduplicates: true });
  });
  afterAll(() => w.close());

  it('claims with one conditional update: RUNNING, fence +1, lease, attempt appended', async () => {
    const schedule = await w.createSchedule(targetId, { payload: { report: 'daily' } });
    const runId = await w.trigger(schedule);
    const claim = claimed(await execution.claim(w.tenant.id, runId, 'worker-a'));
    expect(claim).toMatchObject({ runId, fencingToken: 1, attempt: 1, targetId });
    expect(claim.payload).toEqual({ report: 'daily' });
    expect(claim.leaseUntil.getTime()).toBeGreaterThan(Date.now());
    expect(await row(runId)).toMatchObject({
      state: 'RUNNING',
      fencing_token: '1',
      attempt_count: 1,
      worker_id: 'worker-a',
    });
    expect(await attempts(runId)).toMatchObject([
      { attempt_no: 1, fencing_token: '1', worker_id: 'worker-a', outcome: null },
    ]);

    const again = await execution.claim(w.tenant.id, runId, 'worker-b');
    expect(again).toMatchObject({ claimed: false, reason: 'already_claimed', state: 'RUNNING' });
    expect(await attempts(runId)).toHaveLength(1);
    // Another tenant cannot claim it: not found, never "exists elsewhere".
    expect(await execution.claim('00000000-0000-4000-8000-000000000000', runId, 'x')).toMatchObject(
      {
        claimed: false,
        reason: 'not_found',
      },
    );
    await execution.complete(w.tenant.id, runId, 1, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
    });
  });

  it('never claims early: the database clock decides, and the job comes back when due', async () => {
    const schedule = await w.createSchedule(targetId);
    const due = new Date(Date.now() + 3600_000);
    const runId = await w.insertRun(schedule, due);
    const refused = await execution.claim(w.tenant.id, runId, 'early', { requeue: true });
    expect(refused).toMatchObject({ claimed: false, reason: 'not_due', state: 'QUEUED' });
    expect(await row(runId)).toMatchObject({
      state: 'QUEUED',
      attempt_count: 0,
      fencing_token: '0',
    });
    expect(await attempts(runId)).toHaveLength(0);
    const [job] = await pendingJobs(w.db, runId);
    expect(new Date(job.start_after).getTime()).toBeGreaterThan(due.getTime());
    // An external claim (no requeue) publishes nothing, however often it asks.
    await execution.claim(w.tenant.id, runId, 'early');
    expect(await pendingJobs(w.db, runId)).toHaveLength(1);
  });

  it('a run waiting to retry is not claimed before its retry time', async () => {
    const slow = {
      maxAttempts: 3,
      initialDelayMs: 60_000,
      maxDelayMs: 60_000,
      retryDeadlineSeconds: 600,
    };
    const runId = await w.trigger(await w.createSchedule(targetId, { retryPolicy: slow }));
    claimed(await execution.claim(w.tenant.id, runId, 'a'));
    const done = await execution.complete(w.tenant.id, runId, 1, {
      outcome: 'retryable',
      error: 'target responded 503',
      mayHaveActed: false,
      retryAfterMs: 30_000,
    });
    expect(done).toMatchObject({ accepted: true, state: 'RETRY_WAIT' });
    expect(await execution.claim(w.tenant.id, runId, 'b')).toMatchObject({ reason: 'not_due' });
    await makeRetryDue(runId);
    expect(claimed(await execution.claim(w.tenant.id, runId, 'b'))).toMatchObject({
      attempt: 2,
      fencingToken: 2,
    });
    await execution.complete(w.tenant.id, runId, 2, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
    });
  });

  it('a retry is published in the completion transaction, due at next_attempt_at, until attempts run out', async () => {
    const runId = await w.trigger(await w.createSchedule(targetId));
    const fail = {
      outcome: 'retryable' as const,
      error: 'target responded 500',
      mayHaveActed: false,
    };
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) await makeRetryDue(runId);
      const claim = claimed(await execution.claim(w.tenant.id, runId, 'w'));
      expect(claim.fencingToken).toBe(attempt);
      const result = await execution.complete(w.tenant.id, runId, claim.fencingToken, fail);
      if (attempt < 3) {
        expect(result).toMatchObject({ accepted: true, state: 'RETRY_WAIT' });
        const r = await row(runId);
        const jobs = await pendingJobs(w.db, runId);
        expect(jobs.map((j) => new Date(j.start_after).getTime())).toContain(
          new Date(r.next_attempt_at).getTime(),
        );
      } else {
        expect(result).toMatchObject({ accepted: true, state: 'FAILED' });
        expect(await row(runId)).toMatchObject({
          reason: 'attempts_exhausted',
          reason_detail: 'target responded 500; no attempts left (3 of 3)',
        });
      }
    }
    // An attempt that may have landed and cannot be retried is UNKNOWN, not FAILED.
    const maybe = await w.trigger(
      await w.createSchedule(dedupTargetId, { retryPolicy: { maxAttempts: 1 } }),
    );
    claimed(await execution.claim(w.tenant.id, maybe, 'w'));
    const result = await execution.complete(w.tenant.id, maybe, 1, {
      outcome: 'retryable',
      error: 'request may have been delivered (timeout)',
      mayHaveActed: true,
    });
    expect(result).toMatchObject({ accepted: true, state: 'UNKNOWN' });
  });

  it('refuses runs of a cancelled schedule and ends them CANCELLED, without an attempt', async () => {
    const schedule = await w.createSchedule(targetId);
    const runId = await w.trigger(schedule);
    // Cancelled behind the service's back: the claim itself reads the schedule's status.
    await w.db.query(`UPDATE schedules SET status = 'cancelled' WHERE id = $1`, [schedule]);
    expect(await execution.claim(w.tenant.id, runId, 'w')).toMatchObject({
      claimed: false,
      reason: 'schedule_cancelled',
      state: 'CANCELLED',
    });
    expect(await row(runId)).toMatchObject({ state: 'CANCELLED', reason: 'schedule_cancelled' });
    expect(await attempts(runId)).toHaveLength(0);
  });

  it('refuses exhausted runs and ends them FAILED', async () => {
    const runId = await w.trigger(await w.createSchedule(targetId));
    await w.db.query(
      `UPDATE occurrences SET retry_deadline = now() - interval '1 second' WHERE id = $1`,
      [runId],
    );
    expect(await execution.claim(w.tenant.id, runId, 'w')).toMatchObject({
      reason: 'retry_deadline_exceeded',
      state: 'FAILED',
    });
    expect((await row(runId)).reason).toBe('retry_deadline_exceeded');
    expect(await attempts(runId)).toHaveLength(0);
  });

  it("holds the tenant's maxConcurrentRuns under concurrent claims, and releases permits on completion", async () => {
    // A tenant of its own: its 3 permits are all this test's.
    const tenant = await w.t.createTenant('three-permits', {
      maxConcurrentRuns: 3,
      maxActiveSchedules: 100,
    });
    const schedule = await w.createSchedule(
      await w.createTarget({ apiKey: tenant.apiKey }),
      {},
      tenant.apiKey,
    );
    const succeed = (c: Claim) =>
      execution.complete(tenant.id, c.runId, c.fencingToken, {
        outcome: 'succeeded',
        error: null,
        mayHaveActed: false,
      });
    // Several rounds: once the pool's connections are warm the claims truly overlap.
    for (let round = 0; round < 4; round++) {
      const runIds: string[] = [];
      for (let i = 0; i < 10; i++) runIds.push(await w.trigger(schedule, tenant.apiKey));
      const results = await Promise.all(
        runIds.map((id) => execution.claim(tenant.id, id, 'w', { requeue: true })),
      );
      const won = results.flatMap((r) => (r.claimed ? [r.claim] : []));
      expect(won).toHaveLength(3);
      const [{ n }] = await w.db.query(
        `SELECT count(*)::int AS n FROM occurrences WHERE tenant_id = $1 AND state = 'RUNNING'`,
        [tenant.id],
      );
      expect(n).toBe(3);
      for (const result of results.filter((r) => !r.claimed)) {
        // Refused once, and then it waits in the ledger: no job comes back for it.
        expect(result).toMatchObject({
          reason: 'throttled_concurrency',
          state: 'QUEUED',
          requeuedInMs: null,
        });
      }
      const waiting = runIds.find((_, i) => !results[i].claimed)!;
      expect((await row(waiting)).reason).toBe('throttled_concurrency');
      // Admission made jobs for the three it admitted, none for the seven that wait.
      const jobs = await Promise.all(runIds.map((id) => pendingJobs(w.db, id)));
      expect(jobs.map((j) => j.length).sort()).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 1, 1]);

      // A completion gives its permit back.
      await succeed(won[0]);
      const next = claimed(await execution.claim(tenant.id, waiting, 'w'));
      expect((await row(waiting)).reason).toBeNull();
      for (const c of [...won.slice(1), next]) await succeed(c);
      for (const id of runIds)
        if ((await row(id)).state === 'QUEUED') await occurrences.cancel(tenant.id, id);
    }
  });

  it("overlap 'skip': a second run while one is RUNNING is SKIPPED with its reason", async () => {
    const schedule = await w.createSchedule(targetId, { overlapPolicy: 'skip' });
    const a = await w.trigger(schedule);
    const b = await w.trigger(schedule);
    const claim = claimed(await execution.claim(w.tenant.id, a, 'w'));
    expect(await execution.claim(w.tenant.id, b, 'w')).toMatchObject({
      reason: 'overlap',
      state: 'SKIPPED',
    });
    expect(await row(b)).toMatchObject({ state: 'SKIPPED', reason: 'overlap' });
    expect((await row(b)).finished_at).not.toBeNull();
    await execution.complete(w.tenant.id, a, claim.fencingToken, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
    });
  });

  it("overlap 'allow' runs both; 'buffer_one' defers the second and publishes it when the first ends", async () => {
    const allow = await w.createSchedule(targetId, { overlapPolicy: 'allow' });
    const [x, y] = [await w.trigger(allow), await w.trigger(allow)];
    const cx = claimed(await execution.claim(w.tenant.id, x, 'w'));
    const cy = claimed(await execution.claim(w.tenant.id, y, 'w'));
    for (const c of [cx, cy])
      await execution.complete(w.tenant.id, c.runId, c.fencingToken, {
        outcome: 'succeeded',
        error: null,
        mayHaveActed: false,
      });

    const buffered = await w.createSchedule(targetId, { overlapPolicy: 'buffer_one' });
    const a = await w.trigger(buffered);
    const b = await w.trigger(buffered);
    const ca = claimed(await execution.claim(w.tenant.id, a, 'w'));
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesRun('$1')}`, [b]);
    expect(await execution.claim(w.tenant.id, b, 'w', { requeue: true })).toMatchObject({
      reason: 'overlap',
      state: 'QUEUED',
    });
    expect(await row(b)).toMatchObject({ state: 'QUEUED', reason: 'waiting_for_previous' });
    expect(await pendingJobs(w.db, b)).toHaveLength(0);
    await execution.complete(w.tenant.id, a, ca.fencingToken, {
      outcome: 'failed',
      error: 'target responded 400',
      mayHaveActed: false,
    });
    expect(await pendingJobs(w.db, b)).toHaveLength(1);
    const cb = claimed(await execution.claim(w.tenant.id, b, 'w'));
    await execution.complete(w.tenant.id, b, cb.fencingToken, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
    });
  });

  it('a paused holder: the sweeper reclaims, a new attempt runs, the old completion is rejected and noted', async () => {
    const runId = await w.trigger(await w.createSchedule(dedupTargetId));
    const paused = claimed(await execution.claim(w.tenant.id, runId, 'paused-worker'));
    expect(await execution.heartbeat(w.tenant.id, runId, paused.fencingToken)).toMatchObject({
      held: true,
      cancelRequested: false,
    });
    await expireLease(runId);
    const staleBefore = await w.metric('dueline_stale_completions_total');
    const expiriesBefore = await w.metric('dueline_lease_expiries_total');
    expect(await execution.sweepExpiredLeases()).toBe(1);
    expect(await row(runId)).toMatchObject({
      state: 'RETRY_WAIT',
      fencing_token: '1',
      lease_until: null,
    });
    expect((await attempts(runId))[0]).toMatchObject({ outcome: 'lease_lost' });
    expect(await pendingJobs(w.db, runId)).toHaveLength(2); // the trigger's and the retry's
    expect(await w.metric('dueline_lease_expiries_total')).toBe(expiriesBefore + 1);

    await makeRetryDue(runId);
    const fresh = claimed(await execution.claim(w.tenant.id, runId, 'fresh-worker'));
    expect(fresh).toMatchObject({ attempt: 2, fencingToken: 2 });
    // The paused worker wakes up: its heartbeat and its completion are refused.
    expect(await execution.heartbeat(w.tenant.id, runId, paused.fencingToken)).toEqual({
      held: false,
    });
    const late = await execution.complete(w.tenant.id, runId, paused.fencingToken, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
      httpStatus: 200,
    });
    expect(late).toEqual({ accepted: false, state: 'RUNNING' });
    expect(await w.metric('dueline_stale_completions_total')).toBe(staleBefore + 1);
    const [first, second] = await attempts(runId);
    expect(first).toMatchObject({ outcome: 'stale', http_status: 200 });
    expect(first.error).toMatch(/fencing token 1 is no longer current.*reported succeeded/);
    // A success is written without reading the run first: the new holder's attempt is untouched.
    expect(second).toMatchObject({ fencing_token: '2', outcome: null, ended_at: null });
    expect(await row(runId)).toMatchObject({ state: 'RUNNING', fencing_token: '2' });
    expect(
      await execution.complete(w.tenant.id, runId, 2, {
        outcome: 'succeeded',
        error: null,
        mayHaveActed: false,
      }),
    ).toMatchObject({
      accepted: true,
      state: 'SUCCEEDED',
    });
  });

  it('the sweeper: UNKNOWN for a target that does not deduplicate; never a run whose lease is alive', async () => {
    const schedule = await w.createSchedule(targetId);
    const expired = await w.trigger(schedule);
    const alive = await w.trigger(schedule);
    claimed(await execution.claim(w.tenant.id, expired, 'w'));
    const aliveClaim = claimed(await execution.claim(w.tenant.id, alive, 'w'));
    await expireLease(expired);
    const unknownBefore = await w.metric('dueline_unknown_outcomes_total');
    await execution.sweepExpiredLeases();
    expect(await row(expired)).toMatchObject({
      state: 'UNKNOWN',
      reason: 'lease_expired',
      reason_detail: 'lease expired; the target may have acted',
    });
    expect((await row(expired)).finished_at).not.toBeNull();
    expect((await attempts(expired))[0]).toMatchObject({ outcome: 'lease_lost' });
    expect(await pendingJobs(w.db, expired)).toHaveLength(1); // only the trigger's: no retry
    expect(await w.metric('dueline_unknown_outcomes_total')).toBe(unknownBefore + 1);
    expect(await row(alive)).toMatchObject({ state: 'RUNNING' });
    await execution.complete(w.tenant.id, alive, aliveClaim.fencingToken, {
      outcome: 'succeeded',
      error: null,
      mayHaveActed: false,
    });
  });

  it('cancel racing a claim: either no attempt ever starts, or the running attempt is asked to stop', async () => {
    const schedule = await w.createSchedule(targetId);
    const outcomes = { cancelledFirst: 0, claimedFirst: 0 };
    for (let i = 0; i < 30; i++) {
      const runId = await w.trigger(schedule);
      const [claim, cancel] = await Promise.all([
        execution.claim(w.tenant.id, runId, 'racer'),
        occurrences.cancel(w.tenant.id, runId),
      ]);
      const r = await row(runId);
      const tries = await attempts(runId);
      if (claim.claimed) {
        outcomes.claimedFirst++;
        // The cancel came second: a request to the holder, never a silent CANCELLED.
        expect(cancel.inFlight).toBe(true);
        expect(r).toMatchObject({ state: 'RUNNING' });
        expect(r.cancel_requested_at).not.toBeNull();
        expect(tries).toHaveLength(1);
        expect(
          await execution.heartbeat(w.tenant.id, runId, claim.claim.fencingToken),
        ).toMatchObject({ held: true, cancelRequested: true });
        await execution.complete(w.tenant.id, runId, claim.claim.fencingToken, {
          outcome: 'cancelled',
          error: 'aborted',
          mayHaveActed: true,
        });
        const done = await row(runId);
        expect(done.state).toBe('CANCELLED');
        expect(done.reason).toBe('cancelled_by_request');
        expect(done.reason_detail).toMatch(/may already have happened/);
      } else {
        outcomes.cancelledFirst++;
        expect(claim.reason).toMatch(/^(finished|cancelled_by_request)$/);
        expect(cancel.inFlight).toBe(false);
        expect(r).toMatchObject({
          state: 'CANCELLED',
          reason: 'cancelled_by_request',
          cancel_requested_at: null,
        });
        expect(tries).toHaveLength(0);
      }
      // Whatever the order, no claim succeeds after the cancellation.
      expect(await execution.claim(w.tenant.id, runId, 'late')).toMatchObject({ claimed: false });
      expect(await attempts(runId)).toHaveLength(tries.length);
    }
    expect(outcomes.cancelledFirst + outcomes.claimedFirst).toBe(30);
  });

  it('cancelling a schedule cancels its waiting runs and asks its running ones to stop', async () => {
    const schedule = await w.createSchedule(targetId);
    const running = await w.trigger(schedule);
    const queued = await w.trigger(schedule);
    const claim = claimed(await execution.claim(w.tenant.id, running, 'w'));
    const res = await w.auth(w.t.http.delete(`/schedules/${schedule}`));
    expect(res.status).toBe(200);
    expect(await row(queued)).toMatchObject({ state: 'CANCELLED', reason: 'schedule_cancelled' });
    expect((await row(running)).cancel_requested_at).not.toBeNull();
    expect(await execution.heartbeat(w.tenant.id, running, claim.fencingToken)).toMatchObject({
      held: true,
      cancelRequested: true,
    });
    // A retryable outcome does not retry a cancelled run.
    const result = await execution.complete(w.tenant.id, running, claim.fencingToken, {
      outcome: 'retryable',
      error: 'target responded 503',
      mayHaveActed: false,
    });
    expect(result).toMatchObject({ accepted: true, state: 'CANCELLED' });
    expect(await row(running)).toMatchObject({
      reason: 'cancelled_by_request',
      reason_detail: expect.stringMatching(
        /cancelled before attempt 1 reached the target; last error: target responded 503/,
      ),
    });
  });

  it("says which claims start a first attempt past the schedule's lateAfterSeconds", async () => {
    const strict = await w.createSchedule(targetId, { lateAfterSeconds: 60 });
    const lenient = await w.createSchedule(targetId, { lateAfterSeconds: 7 * 24 * 3600 });
    const unwatched = await w.createSchedule(targetId);
    const anHourAgo = new Date(Date.now() - 3600_000);
    const late = await w.insertRun(strict, anHourAgo);
    const inTime = await w.insertRun(lenient, anHourAgo);
    const noThreshold = await w.insertRun(unwatched, anHourAgo);
    await w.db.query(
      `INSERT INTO subscriptions (tenant_id, target_id, event_types) VALUES ($1, $2, '{run.late}')`,
      [w.tenant.id, targetId],
    );
    const lateEvents = async () =>
      (
        await w.db.query(
          `SELECT data->>'runId' AS run_id FROM events WHERE tenant_id = $1 AND type = 'run.late'`,
          [w.tenant.id],
        )
      ).map((event: { run_id: string }) => event.run_id);
    const startsLate = async (runId: string) =>
      claimed(await execution.claim(w.tenant.id, runId, 'worker-a')).startsLate;
    expect(await startsLate(late)).toBe(true);
    expect(await startsLate(inTime)).toBe(false);
    // Without a threshold no claim is late.
    expect(await startsLate(noThreshold)).toBe(false);
    // The claim's own statement recorded run.late for the late one alone.
    expect(await lateEvents()).toEqual([late]);
    // A claim that takes nothing (the run is RUNNING already) records nothing, in a batch too.
    const again = await execution.claimBatch(
      [late, inTime].map((runId) => ({ runId, tenantId: w.tenant.id })),
      'worker-b',
    );
    expect(again).toEqual([]);
    expect(await lateEvents()).toEqual([late]);
  });
});
