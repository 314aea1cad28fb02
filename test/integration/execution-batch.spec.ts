import { randomUUID } from 'node:crypto';
import { AdmissionService } from '../../src/admission';
import { databaseRoundTrips, databaseWaits } from '../../src/database';
import { eventually } from '../support/eventually';
import type { Claim } from '../../src/admission';
import type { AttemptReport } from '../../src/execution';
import {
  ExecutionWorld,
  pendingJobs,
  startExecutionWorld,
  runEngine,
  type RunEngine,
} from './execution.fixtures';
import { carriesAnyRun } from '../support/run-jobs';

const SUCCEEDED: AttemptReport = { outcome: 'succeeded', error: null, mayHaveActed: false };

/**
 * The built-in worker's batched paths: claimBatch (one statement for many runs) and
 * completeMany (one transaction for many completions) must keep every rule the one-run paths
 * keep: never early, caps, rate, overlap, fences.
 */
describe('execution: batched claims and completions', () => {
  let w: ExecutionWorld;
  let execution: RunEngine;

  const row = async (runId: string) =>
    (await w.db.query('SELECT * FROM occurrences WHERE id = $1', [runId]))[0];
  const running = async (tenantId: string) =>
    (
      await w.db.query(
        `SELECT count(*)::int AS n FROM occurrences WHERE tenant_id = $1 AND state = 'RUNNING'`,
        [tenantId],
      )
    )[0].n as number;
  /** Instants are unique per (schedule, revision): each run gets its own past millisecond. */
  let instant = Date.now() - 3600_000;
  const dueRuns = async (scheduleId: string, n: number) => {
    const ids: string[] = [];
    // Through admission, as the poller's runs are: the batch claims admitted runs only.
    for (let i = 0; i < n; i++) {
      ids.push(await w.insertRun(scheduleId, new Date(instant++), { publish: true }));
    }
    // The test is the worker that fetched their jobs: what is pending later is new.
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesAnyRun('$1::text[]')}`, [ids]);
    return ids;
  };
  /** A tenant of its own (quotas differ per test), with a target and a schedule maker. */
  const tenant = async (quotas: Record<string, number>) => {
    const t = await w.t.createTenant(`batch-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 1000,
      ...quotas,
    });
    const targetId = await w.createTarget({ apiKey: t.apiKey });
    return {
      ...t,
      targetId,
      schedule: (body: Record<string, unknown> = {}) => w.createSchedule(targetId, body, t.apiKey),
    };
  };
  /** Until a statement of this database waits for a lock another transaction holds. */
  const someoneWaitsForARowLock = () =>
    eventually(async () => {
      const [{ waiting }] = await w.db.query(
        `SELECT count(*)::int AS waiting FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'`,
      );
      expect(waiting).toBeGreaterThan(0);
    });
  /** claimBatch with every run said to be of `tenantId` (as a job for it would say). */
  const claimBatch = (tenantId: string, runIds: string[], workerId: string) =>
    execution.claimBatch(
      runIds.map((runId) => ({ runId, tenantId })),
      workerId,
    );
  const succeedAll = (claims: Claim[]) =>
    execution.completeMany(
      claims.map((c) => ({
        tenantId: c.tenantId,
        runId: c.runId,
        fencingToken: c.fencingToken,
        report: SUCCEEDED,
      })),
    );

  beforeAll(async () => {
    w = await startExecutionWorld('api');
    execution = runEngine(w.t.app);
  });
  afterAll(() => w.close());

  it('claims only due, waiting, live runs of its own tenant, with an attempt each', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const b = await tenant({ maxConcurrentRuns: 100 });
    const schedule = await a.schedule();
    const due = await dueRuns(schedule, 3);
    const notDue = await w.insertRun(schedule, new Date(Date.now() + 3600_000), { publish: true });
    const cancelled = (await dueRuns(schedule, 1))[0];
    await w.db.query(`UPDATE occurrences SET cancel_requested_at = now() WHERE id = $1`, [
      cancelled,
    ]);
    const otherTenants = await dueRuns(await b.schedule(), 1);

    const claims = await claimBatch(
      a.id,
      [...due, notDue, cancelled, ...otherTenants, randomUUID()],
      'worker-batch',
    );
    expect(claims.map((c) => c.runId).sort()).toEqual([...due].sort());
    for (const claim of claims) {
      expect(claim).toMatchObject({ tenantId: a.id, attempt: 1, fencingToken: 1 });
      expect(claim.targetId).toBe(a.targetId);
      expect(await row(claim.runId)).toMatchObject({ state: 'RUNNING', worker_id: 'worker-batch' });
    }
    const attempts = await w.db.query(
      `SELECT run_id, worker_id, fencing_token FROM attempts WHERE run_id = ANY($1::uuid[])`,
      [[...due, notDue, cancelled, ...otherTenants]],
    );
    expect(attempts).toHaveLength(3);
    for (const attempt of attempts) expect(attempt.worker_id).toBe('worker-batch');
    for (const id of [notDue, cancelled, ...otherTenants]) {
      expect(await row(id)).toMatchObject({ state: 'QUEUED', attempt_count: 0 });
    }
    await succeedAll(claims);
  });

  it("admits no more than the tenant's free permits, even concurrently; the batch claims only those", async () => {
    const a = await tenant({ maxConcurrentRuns: 5 });
    const schedule = await a.schedule();
    const [first] = await claimBatch(a.id, await dueRuns(schedule, 1), 'w0');
    // Four admissions at once, of four runs each: one permit is taken, four are free.
    const groups = await Promise.all([1, 2, 3, 4].map(() => dueRuns(schedule, 4)));
    const [{ admitted, waiting }] = await w.db.query(
      `SELECT count(*) FILTER (WHERE admitted_at IS NOT NULL)::int AS admitted,
              count(*) FILTER (WHERE reason = 'throttled_concurrency')::int AS waiting
         FROM occurrences WHERE id = ANY($1::uuid[])`,
      [groups.flat()],
    );
    expect({ admitted, waiting }).toEqual({ admitted: 4, waiting: 12 });
    const claims = await claimBatch(a.id, groups.flat(), 'w1');
    expect(claims).toHaveLength(4);
    expect(await running(a.id)).toBe(5);
    // Completion gives permits back.
    await succeedAll([first, ...claims.slice(0, 2)]);
    expect(await running(a.id)).toBe(2);
    await succeedAll(claims.slice(2));
  });

  it('a cancel committed while the batch waits for the row wins: that run is not claimed', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const [cancelled, other] = await dueRuns(await a.schedule(), 2);
    const canceller = w.db.createQueryRunner();
    await canceller.connect();
    try {
      await canceller.startTransaction();
      await canceller.query(
        `UPDATE occurrences SET state = 'CANCELLED', reason = 'cancelled_by_request',
                finished_at = now() WHERE id = $1`,
        [cancelled],
      );
      // The batch reads the committed (QUEUED) version, then waits on the cancel's row lock.
      const claiming = claimBatch(a.id, [cancelled, other], 'w');
      await someoneWaitsForARowLock();
      await canceller.commitTransaction();
      const claims = await claiming;
      expect(claims.map((c) => c.runId)).toEqual([other]);
      expect(await row(cancelled)).toMatchObject({ state: 'CANCELLED', attempt_count: 0 });
      expect(
        await w.db.query('SELECT 1 FROM attempts WHERE run_id = $1', [cancelled]),
      ).toHaveLength(0);
      await succeedAll(claims);
    } finally {
      await canceller.release();
    }
  });

  it('a heartbeat committed while a completion waits for the row: the success is still written', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const [renewed, other] = await claimBatch(
      a.id,
      await dueRuns(await a.schedule({ overlapPolicy: 'allow' }), 2),
      'w',
    );
    const renewer = w.db.createQueryRunner();
    await renewer.connect();
    try {
      // A renewal of the lease (as HEARTBEAT writes it: a new row version, the fence unchanged),
      // holding the row while the completion starts, so the completion's statement began
      // before the new version existed.
      await renewer.startTransaction();
      await renewer.query(
        `UPDATE occurrences SET lease_until = now() + interval '1 minute', updated_at = now()
          WHERE id = $1`,
        [renewed.runId],
      );
      const completing = succeedAll([renewed, other]);
      await someoneWaitsForARowLock();
      await renewer.commitTransaction();
      expect(await completing).toMatchObject([
        { accepted: true, state: 'SUCCEEDED' },
        { accepted: true, state: 'SUCCEEDED' },
      ]);
      expect(await row(renewed.runId)).toMatchObject({ state: 'SUCCEEDED', lease_until: null });
      const [attempt] = await w.db.query('SELECT outcome FROM attempts WHERE run_id = $1', [
        renewed.runId,
      ]);
      expect(attempt).toEqual({ outcome: 'succeeded' });
    } finally {
      await renewer.release();
    }
  });

  it("one batch across tenants: each tenant's permits bound its own runs only", async () => {
    const narrow = await tenant({ maxConcurrentRuns: 2 });
    const wide = await tenant({ maxConcurrentRuns: 100 });
    const narrowRuns = await dueRuns(await narrow.schedule(), 4);
    const wideRuns = await dueRuns(await wide.schedule(), 4);
    const claims = await execution.claimBatch(
      [
        ...narrowRuns.map((runId) => ({ runId, tenantId: narrow.id })),
        ...wideRuns.map((runId) => ({ runId, tenantId: wide.id })),
      ],
      'w',
    );
    const of = (tenantId: string) => claims.filter((c) => c.tenantId === tenantId);
    // The oldest two of the narrow tenant, all four of the wide one.
    expect(
      of(narrow.id)
        .map((c) => c.runId)
        .sort(),
    ).toEqual(narrowRuns.slice(0, 2).sort());
    expect(
      of(wide.id)
        .map((c) => c.runId)
        .sort(),
    ).toEqual([...wideRuns].sort());
    expect(await running(narrow.id)).toBe(2);
    await succeedAll(claims);
  });

  it("spends the tenant's dispatch rate at admission: never more runs than tokens", async () => {
    const a = await tenant({ maxConcurrentRuns: 100, dispatchRatePerSecond: 3 });
    const schedule = await a.schedule();
    const runs = await dueRuns(schedule, 8);
    const emptiedFrom = Date.now();
    const claims = await claimBatch(a.id, runs, 'w');
    expect(claims).toHaveLength(3);
    // The bucket is empty now: new runs join the waiting list, the batch takes none of them.
    const later = await dueRuns(schedule, 2);
    expect(await claimBatch(a.id, [...runs, ...later], 'w')).toHaveLength(0);
    // It refills at 3 per second: a whole token after a third of a second, so the admitter
    // takes one run, never more than the tokens the time since the bucket was emptied can have
    // made (on a machine that pauses the test for more than a third of a second, two).
    const admission = w.t.app.get(AdmissionService);
    let admittedBy = 0;
    const refilled = await eventually(
      async () => {
        await admission.admitWaiting();
        admittedBy = Date.now();
        const claimed = await claimBatch(a.id, [...runs, ...later], 'w');
        expect(claimed.length).toBeGreaterThan(0);
        return claimed;
      },
      { intervalMs: 20 },
    );
    // Whole tokens made since (plus the fraction of one the spend may have left).
    const tokensSince = Math.floor(((admittedBy - emptiedFrom) / 1000) * 3 + 1);
    expect(refilled.length).toBeLessThanOrEqual(Math.min(tokensSince, runs.length - 3));
    // The oldest waiting runs first.
    expect(refilled.map((c) => c.runId).sort()).toEqual(runs.slice(3, 3 + refilled.length).sort());
    expect(await claimBatch(a.id, [...runs, ...later], 'w')).toHaveLength(0);
    await succeedAll([...claims, ...refilled]);
  });

  it('takes one run per schedule whose overlap policy is not allow, none beside a RUNNING one', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const skip = await a.schedule({ overlapPolicy: 'skip' });
    const buffered = await a.schedule({ overlapPolicy: 'buffer_one' });
    const allow = await a.schedule({ overlapPolicy: 'allow' });
    const skipRuns = await dueRuns(skip, 3);
    const bufferedRuns = await dueRuns(buffered, 2);
    const allowRuns = await dueRuns(allow, 3);
    const claims = await claimBatch(a.id, [...skipRuns, ...bufferedRuns, ...allowRuns], 'w');
    const ids = claims.map((c) => c.runId);
    // The oldest of each one-at-a-time schedule, every run of the allow schedule.
    expect(ids.sort()).toEqual([skipRuns[0], bufferedRuns[0], ...allowRuns].sort());
    // While they run, the others of those schedules stay for the one-run claim to decide.
    const again = await claimBatch(a.id, [...skipRuns, ...bufferedRuns], 'w');
    expect(again).toHaveLength(0);
    expect(await row(skipRuns[1])).toMatchObject({ state: 'QUEUED' });
    await succeedAll(claims);
  });

  it('completes many in one call: transitions under each fence, stale ones noted, results in order', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const schedule = await a.schedule({
      overlapPolicy: 'allow',
      retryPolicy: {
        maxAttempts: 3,
        initialDelayMs: 60_000,
        maxDelayMs: 60_000,
        retryDeadlineSeconds: 600,
      },
    });
    const [ok, retry, failed, stale] = await claimBatch(a.id, await dueRuns(schedule, 4), 'w');
    // The stale one: its lease expired and the sweeper took it back.
    await w.db.query(
      `UPDATE occurrences SET lease_until = now() - interval '1 second' WHERE id = $1`,
      [stale.runId],
    );
    await execution.sweepExpiredLeases();
    const results = await execution.completeMany([
      { tenantId: a.id, runId: ok.runId, fencingToken: ok.fencingToken, report: SUCCEEDED },
      {
        tenantId: a.id,
        runId: retry.runId,
        fencingToken: retry.fencingToken,
        report: { outcome: 'retryable', error: 'target responded 503', mayHaveActed: false },
      },
      {
        tenantId: a.id,
        runId: failed.runId,
        fencingToken: failed.fencingToken,
        report: {
          outcome: 'failed',
          error: 'target responded 400',
          mayHaveActed: false,
          httpStatus: 400,
        },
      },
      { tenantId: a.id, runId: stale.runId, fencingToken: stale.fencingToken, report: SUCCEEDED },
    ]);
    expect(results).toMatchObject([
      { accepted: true, state: 'SUCCEEDED' },
      { accepted: true, state: 'RETRY_WAIT' },
      {
        accepted: true,
        state: 'FAILED',
        reason: 'target_rejected',
        reasonDetail: 'target responded 400',
      },
      { accepted: false, state: 'UNKNOWN' },
    ]);
    expect(await row(ok.runId)).toMatchObject({ state: 'SUCCEEDED', lease_until: null });
    expect(await row(failed.runId)).toMatchObject({ state: 'FAILED' });
    const retryRow = await row(retry.runId);
    expect(retryRow.state).toBe('RETRY_WAIT');
    const [job] = await pendingJobs(w.db, retry.runId);
    expect(new Date(job.start_after).getTime()).toBe(retryRow.next_attempt_at.getTime());

    const attempts = await w.db.query(
      `SELECT run_id, outcome, http_status FROM attempts WHERE run_id = ANY($1::uuid[])`,
      [[ok.runId, retry.runId, failed.runId, stale.runId]],
    );
    const outcome = (runId: string) => attempts.find((x: any) => x.run_id === runId);
    expect(outcome(ok.runId)).toMatchObject({ outcome: 'succeeded' });
    expect(outcome(retry.runId)).toMatchObject({ outcome: 'retryable' });
    expect(outcome(failed.runId)).toMatchObject({ outcome: 'failed', http_status: 400 });
    expect(outcome(stale.runId)).toMatchObject({ outcome: 'stale' });

    await expect(
      execution.completeMany([
        { tenantId: a.id, runId: ok.runId, fencingToken: 1, report: SUCCEEDED },
        { tenantId: a.id, runId: ok.runId, fencingToken: 1, report: SUCCEEDED },
      ]),
    ).rejects.toThrow(/once per batch/);
  });

  it("records a run's end as an event only where its tenant subscribes: a statement less where none does", async () => {
    /** Completes `n` claimed runs of a fresh schedule of `who`: the round trips it took. */
    const completeRuns = async (who: Awaited<ReturnType<typeof tenant>>, n: number) => {
      const schedule = await who.schedule({ overlapPolicy: 'allow' });
      const claims = await claimBatch(who.id, await dueRuns(schedule, n), 'w');
      const before = databaseRoundTrips();
      const results = await succeedAll(claims);
      const took = databaseRoundTrips() - before;
      expect(results.map((r) => r.state)).toEqual(Array(n).fill('SUCCEEDED'));
      return { took, runIds: claims.map((c) => c.runId) };
    };
    const eventsOf = async (runIds: string[]) =>
      (
        await w.db.query(
          `SELECT count(*)::int AS n FROM events WHERE data->>'runId' = ANY($1::text[])`,
          [runIds],
        )
      )[0].n as number;
    const quiet = await tenant({ maxConcurrentRuns: 100 });
    const listening = await tenant({ maxConcurrentRuns: 100 });
    const res = await w.t.http
      .post('/subscriptions')
      .set('Authorization', `Bearer ${listening.apiKey}`)
      .send({ targetId: listening.targetId, eventTypes: ['run.succeeded'] });
    expect(res.status).toBe(201);

    const unheard = await completeRuns(quiet, 3);
    const heard = await completeRuns(listening, 3);
    expect(await eventsOf(unheard.runIds)).toBe(0);
    expect(await eventsOf(heard.runIds)).toBe(3);
    // The same batch but for the events' insert, which only the subscribed tenant's needs.
    expect(heard.took - unheard.took).toBe(1);
  });

  it('writes BEGIN and the schedule locks with the statements they guard: a claim waits once, a success twice, a retry three times', async () => {
    const who = await tenant({ maxConcurrentRuns: 100 });
    const schedules = await Promise.all([0, 1, 2].map(() => who.schedule()));
    const runIds = (await Promise.all(schedules.map((id) => dueRuns(id, 1)))).flat();
    /** What `work` cost: its round trips and the waits they took. */
    const cost = async <T>(work: () => Promise<T>) => {
      const before = { roundTrips: databaseRoundTrips(), waits: databaseWaits() };
      const result = await work();
      return {
        result,
        roundTrips: databaseRoundTrips() - before.roundTrips,
        waits: databaseWaits() - before.waits,
      };
    };
    const claim = await cost(() => claimBatch(who.id, runIds, 'w'));
    expect(claim.result.map((c) => c.runId).sort()).toEqual([...runIds].sort());
    // BEGIN, the schedules' locks, the claim and the COMMIT behind it (the transaction's last
    // statements): one wait.
    expect(claim).toMatchObject({ roundTrips: 4, waits: 1 });
    const [retried, ...succeeded] = claim.result;
    const completion = await cost(() => succeedAll(succeeded));
    expect(completion.result.map((r) => r.state)).toEqual(Array(2).fill('SUCCEEDED'));
    // A success decides its run's end by itself: BEGIN, the schedules' locks, the fenced
    // transitions and the attempts' ends in one wait (no read of the runs first), COMMIT.
    expect(completion).toMatchObject({ roundTrips: 5, waits: 2 });
    const retry = await cost(() =>
      execution.completeMany([
        {
          tenantId: who.id,
          runId: retried.runId,
          fencingToken: retried.fencingToken,
          scheduledAt: retried.scheduledAt,
          report: { outcome: 'retryable', error: 'target responded 503', mayHaveActed: false },
        },
      ]),
    );
    expect(retry.result).toMatchObject([{ accepted: true, state: 'RETRY_WAIT' }]);
    // A retry is decided from the run as read under its fence: BEGIN, the locks and that read;
    // the transition and the attempt's end; the retry's job; COMMIT.
    expect(retry).toMatchObject({ roundTrips: 7, waits: 4 });
    // Ran as if each had waited: one run per schedule claimed, each attempt ended.
    const attempts = await w.db.query(
      `SELECT outcome FROM attempts WHERE run_id = ANY($1::uuid[]) ORDER BY outcome`,
      [runIds],
    );
    expect(attempts.map((a: { outcome: string }) => a.outcome)).toEqual([
      'retryable',
      'succeeded',
      'succeeded',
    ]);
  });

  it('a buffer_one run ending in a batch hands the waiting run its job', async () => {
    const a = await tenant({ maxConcurrentRuns: 100 });
    const schedule = await a.schedule({ overlapPolicy: 'buffer_one' });
    const [first, second] = await dueRuns(schedule, 2);
    const [claim] = await claimBatch(a.id, [first, second], 'w');
    expect(claim.runId).toBe(first);
    // The one-run claim is what marks the second as waiting (the batch leaves it alone).
    expect(await execution.claim(a.id, second, 'w', { requeue: true })).toMatchObject({
      reason: 'overlap',
    });
    expect(await row(second)).toMatchObject({ reason: 'waiting_for_previous' });
    expect(await pendingJobs(w.db, second)).toHaveLength(0);
    await succeedAll([claim]);
    expect(await pendingJobs(w.db, second)).toHaveLength(1);
  });
});
