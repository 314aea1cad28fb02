import { randomUUID } from 'node:crypto';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { carriesRun } from '../support/run-jobs';

/**
 * The runs API through HTTP: history, manual triggers, cancellation and the worker contract for
 * external workers (no built-in worker runs here, so runs wait until the test claims them).
 */
describe('runs API', () => {
  let w: ExecutionWorld;
  let targetId: string;
  let other: { id: string; apiKey: string };

  const post = (path: string, body?: object, apiKey?: string) => {
    const req = w.auth(w.t.http.post(path), apiKey);
    return body === undefined ? req : req.send(body);
  };
  const get = (path: string, apiKey?: string) => w.auth(w.t.http.get(path), apiKey);

  beforeAll(async () => {
    w = await startExecutionWorld('api');
    targetId = await w.createTarget();
    other = await w.t.createTenant('other');
  });
  afterAll(() => w.close());

  describe('POST /schedules/{id}/trigger', () => {
    it('creates one QUEUED manual run due now, with Location and the run shape', async () => {
      const schedule = await w.createSchedule(targetId, {
        runAt: undefined,
        cron: '0 9 * * *',
        timezone: 'Europe/Berlin',
      });
      const before = Date.now();
      const res = await post(`/schedules/${schedule}/trigger`);
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/runs/${res.body.id}`);
      expect(res.body).toEqual({
        id: expect.any(String),
        scheduleId: schedule,
        revision: 1,
        scheduledAt: expect.any(String),
        scheduledLocal: expect.stringMatching(
          /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?[+-]\d\d:\d\d$/,
        ),
        state: 'QUEUED',
        reason: null,
        reasonDetail: null,
        trigger: 'manual',
        idempotencyKey: expect.any(String),
        replayOf: null,
        attemptCount: 0,
        maxAttempts: 3,
        fencingToken: 0,
        leaseUntil: null,
        nextAttemptAt: null,
        cancelRequestedAt: null,
        createdAt: expect.any(String),
        finishedAt: null,
        priority: 'normal',
        startDeadline: null,
        // A manual run fires at once: its planned instant is its instant.
        firesAt: res.body.scheduledAt,
        estimatedStartAt: null,
        links: {
          self: `/runs/${res.body.id}`,
          schedule: `/schedules/${schedule}`,
          revision: `/schedules/${schedule}/revisions/1`,
        },
      });
      const at = new Date(res.body.scheduledAt).getTime();
      expect(at).toBeGreaterThanOrEqual(before - 1000);
      expect(at).toBeLessThanOrEqual(Date.now() + 1000);
      // Its job is in the queue, committed with it.
      const jobs = await w.db.query(`SELECT 1 FROM pgboss.job WHERE ${carriesRun('$1')}`, [
        res.body.id,
      ]);
      expect(jobs).toHaveLength(1);
    });

    it("answers 404 for an unknown or another tenant's schedule and 409 for a cancelled one", async () => {
      const schedule = await w.createSchedule(targetId);
      expect((await post(`/schedules/${randomUUID()}/trigger`)).status).toBe(404);
      expect((await post(`/schedules/not-a-uuid/trigger`)).status).toBe(404);
      expect((await post(`/schedules/${schedule}/trigger`, undefined, other.apiKey)).status).toBe(
        404,
      );
      expect((await w.auth(w.t.http.delete(`/schedules/${schedule}`))).status).toBe(200);
      const res = await post(`/schedules/${schedule}/trigger`);
      expect(res.status).toBe(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });
  });

  describe('GET /schedules/{id}/runs and GET /runs/{id}', () => {
    it('pages by (scheduledAt, id) with a cursor that visits each run once, and filters by state', async () => {
      const schedule = await w.createSchedule(targetId);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push(await w.trigger(schedule));
      await post(`/runs/${ids[1]}/cancel`);
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res = await get(
          `/schedules/${schedule}/runs?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
        );
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(2);
        seen.push(...res.body.items.map((r: { id: string }) => r.id));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      const cancelled = await get(`/schedules/${schedule}/runs?state=CANCELLED`);
      expect(cancelled.body.items.map((r: { id: string }) => r.id)).toEqual([ids[1]]);
      expect(cancelled.body.items[0]).toMatchObject({
        state: 'CANCELLED',
        reason: 'cancelled_by_request',
      });
      expect(cancelled.body.nextCursor).toBeNull();
    });

    it('shows coalesced missed instants only on the run they were folded into', async () => {
      const schedule = await w.createSchedule(targetId);
      const [folded, plain] = [await w.trigger(schedule), await w.trigger(schedule)];
      await w.db.query(
        `UPDATE occurrences SET coalesced_count = 2,
                coalesced_first = scheduled_at - interval '2 minutes',
                coalesced_last = scheduled_at - interval '1 minute'
          WHERE id = $1`,
        [folded],
      );
      const run = (await get(`/runs/${folded}`)).body;
      const at = new Date(run.scheduledAt).getTime();
      expect(run.coalesced).toEqual({
        count: 2,
        first: new Date(at - 120_000).toISOString(),
        last: new Date(at - 60_000).toISOString(),
      });
      expect((await get(`/runs/${plain}`)).body).not.toHaveProperty('coalesced');
    });

    it('rejects bad paging input and hides other tenants', async () => {
      const schedule = await w.createSchedule(targetId);
      const runId = await w.trigger(schedule);
      expect((await get(`/schedules/${schedule}/runs?limit=101`)).status).toBe(400);
      expect((await get(`/schedules/${schedule}/runs?limit=0`)).status).toBe(400);
      expect((await get(`/schedules/${schedule}/runs?state=DONE`)).status).toBe(400);
      expect((await get(`/schedules/${schedule}/runs?cursor=garbage`)).status).toBe(400);
      expect((await get(`/schedules/${schedule}/runs`, other.apiKey)).status).toBe(404);
      expect((await get(`/schedules/${randomUUID()}/runs`)).status).toBe(404);
      expect((await get(`/runs/${runId}`, other.apiKey)).status).toBe(404);
      expect((await post(`/runs/${runId}/cancel`, undefined, other.apiKey)).status).toBe(404);
      expect((await post(`/runs/${runId}/claim`, undefined, other.apiKey)).status).toBe(404);
      expect((await get(`/runs/${randomUUID()}`)).status).toBe(404);
      expect((await get(`/runs/nope`)).status).toBe(404);
      const res = await get(`/runs/${runId}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: runId, state: 'QUEUED', attempts: [] });
    });
  });

  describe('worker contract', () => {
    it('claim → heartbeat → complete, with a retry, then a stale token answers 409', async () => {
      const schedule = await w.createSchedule(targetId, { payload: { invoice: 42 } });
      const runId = await w.trigger(schedule);

      const claim = await post(`/runs/${runId}/claim`).set('X-Worker-Id', 'ext-1');
      expect(claim.status).toBe(200);
      expect(claim.body).toEqual({
        runId,
        idempotencyKey: runId,
        fencingToken: 1,
        leaseUntil: expect.any(String),
        attempt: 1,
        payload: { invoice: 42 },
        scheduleId: schedule,
        scheduledAt: expect.any(String),
      });
      const twice = await post(`/runs/${runId}/claim`);
      expect(twice.status).toBe(409);
      expect(twice.body).toMatchObject({ reason: 'already_claimed', currentState: 'RUNNING' });

      const beat = await post(`/runs/${runId}/heartbeat`, { fencingToken: 1 });
      expect(beat.status).toBe(200);
      expect(beat.body).toMatchObject({ runId, fencingToken: 1, cancelRequested: false });
      expect(new Date(beat.body.leaseUntil).getTime()).toBeGreaterThanOrEqual(
        new Date(claim.body.leaseUntil).getTime(),
      );
      expect((await post(`/runs/${runId}/heartbeat`, { fencingToken: 7 })).status).toBe(409);

      const failed = await post(`/runs/${runId}/complete`, {
        fencingToken: 1,
        outcome: 'failed',
        retryable: true,
        error: 'upstream 503',
        httpStatus: 503,
        durationMs: 12,
      });
      expect(failed.status).toBe(200);
      expect(failed.body).toMatchObject({
        runId,
        state: 'RETRY_WAIT',
        reason: 'retryable_failure',
        reasonDetail: 'upstream 503',
      });
      expect(failed.body.nextAttemptAt).toEqual(expect.any(String));
      const again = await post(`/runs/${runId}/complete`, {
        fencingToken: 1,
        outcome: 'succeeded',
      });
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({
        reason: 'stale_fencing_token',
        currentState: 'RETRY_WAIT',
      });

      const run = await get(`/runs/${runId}`);
      expect(run.body).toMatchObject({
        state: 'RETRY_WAIT',
        attemptCount: 1,
        fencingToken: 1,
        reason: 'retryable_failure',
        reasonDetail: 'upstream 503',
      });
      expect(run.body.attempts).toEqual([
        {
          attemptNo: 1,
          startedAt: expect.any(String),
          endedAt: expect.any(String),
          fencingToken: 1,
          outcome: 'retryable',
          httpStatus: 503,
          error: 'upstream 503',
          durationMs: 12,
          // An external worker reports no answer of the target's, and no trace.
          response: null,
          traceId: null,
        },
      ]);
    });

    it('refuses a run that is not due yet (never early) with 409', async () => {
      const schedule = await w.createSchedule(targetId);
      const runId = await w.insertRun(schedule, new Date(Date.now() + 3600_000));
      const res = await post(`/runs/${runId}/claim`);
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({ reason: 'not_due', currentState: 'QUEUED' });
      expect((await get(`/runs/${runId}`)).body.attempts).toEqual([]);
    });

    it('validates its bodies', async () => {
      const runId = await w.trigger(await w.createSchedule(targetId));
      expect((await post(`/runs/${runId}/heartbeat`, {})).status).toBe(400);
      expect((await post(`/runs/${runId}/heartbeat`, { fencingToken: 'one' })).status).toBe(400);
      expect(
        (await post(`/runs/${runId}/complete`, { fencingToken: 1, outcome: 'great' })).status,
      ).toBe(400);
      expect(
        (await post(`/runs/${runId}/complete`, { fencingToken: 1, outcome: 'failed', extra: 1 }))
          .status,
      ).toBe(400);
      expect((await post(`/runs/${runId}/claim`).set('X-Worker-Id', 'has space')).status).toBe(400);
    });
  });

  describe('POST /runs/{id}/cancel', () => {
    it('ends a waiting run at once; a later claim is refused; a final run answers 409', async () => {
      const runId = await w.trigger(await w.createSchedule(targetId));
      const res = await post(`/runs/${runId}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        id: runId,
        state: 'CANCELLED',
        reason: 'cancelled_by_request',
        inFlight: false,
      });
      expect(res.body.finishedAt).toEqual(expect.any(String));
      expect((await post(`/runs/${runId}/claim`)).status).toBe(409);
      const again = await post(`/runs/${runId}/cancel`);
      expect(again.status).toBe(409);
      expect(again.body).toMatchObject({ currentState: 'CANCELLED' });
    });

    it('asks a running attempt to stop: the heartbeat says so, and the run ends CANCELLED', async () => {
      const runId = await w.trigger(await w.createSchedule(targetId));
      const claim = await post(`/runs/${runId}/claim`);
      const res = await post(`/runs/${runId}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        state: 'RUNNING',
        inFlight: true,
        cancelRequestedAt: expect.any(String),
      });
      const beat = await post(`/runs/${runId}/heartbeat`, {
        fencingToken: claim.body.fencingToken,
      });
      expect(beat.body.cancelRequested).toBe(true);
      const done = await post(`/runs/${runId}/complete`, {
        fencingToken: claim.body.fencingToken,
        outcome: 'cancelled',
      });
      expect(done.body).toMatchObject({ state: 'CANCELLED' });
      expect(done.body.reason).toBe('cancelled_by_request');
      expect(done.body.reasonDetail).toMatch(/may already have happened/);
    });

    it('cancelling a schedule through PATCH does the same for its runs', async () => {
      const schedule = await w.createSchedule(targetId);
      const running = await w.trigger(schedule);
      const waiting = await w.trigger(schedule);
      await post(`/runs/${running}/claim`);
      const res = await w
        .auth(w.t.http.patch(`/schedules/${schedule}`))
        .set('If-Match', '"1"')
        .send({ status: 'cancelled' });
      expect(res.status).toBe(200);
      expect((await get(`/runs/${waiting}`)).body).toMatchObject({
        state: 'CANCELLED',
        reason: 'schedule_cancelled',
      });
      expect((await get(`/runs/${running}`)).body).toMatchObject({
        state: 'RUNNING',
        cancelRequestedAt: expect.any(String),
      });
    });
  });

  it('documents the routes in OpenAPI', async () => {
    const doc = (await w.t.http.get('/docs-json')).body;
    for (const path of [
      '/schedules/{id}/runs',
      '/schedules/{id}/trigger',
      '/runs/{id}',
      '/runs/{id}/cancel',
      '/runs/{id}/claim',
      '/runs/{id}/heartbeat',
      '/runs/{id}/complete',
    ]) {
      expect(doc.paths[path]).toBeDefined();
    }
  });
});
