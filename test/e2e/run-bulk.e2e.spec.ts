import { DataSource } from 'typeorm';
import { BulkOperationsService } from '../../src/bulk-operations';
import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';

/**
 * GET /runs and the bulk operations, through HTTP. No built-in worker runs here: the test plays
 * an external worker to end runs FAILED or UNKNOWN.
 */
describe('run search and bulk replay / cancel', () => {
  let w: ExecutionWorld;
  let db: DataSource;
  let targetId: string;
  let otherTargetId: string;
  let other: { id: string; apiKey: string };

  const post = (path: string, body?: object, apiKey?: string) => {
    const req = w.auth(w.t.http.post(path), apiKey);
    return body === undefined ? req : req.send(body);
  };
  const get = (path: string, apiKey?: string) => w.auth(w.t.http.get(path), apiKey);

  /** A run of `scheduleId` at `at`, claimed and completed with `outcome` by an external worker. */
  async function endedRun(
    scheduleId: string,
    at: Date,
    outcome: 'failed' | 'unknown' | 'succeeded',
  ) {
    const runId = await w.insertRun(scheduleId, at, { publish: true });
    const claim = await post(`/runs/${runId}/claim`);
    expect(claim.status).toBe(200);
    const done = await post(`/runs/${runId}/complete`, {
      fencingToken: claim.body.fencingToken,
      outcome,
      retryable: false,
      error: outcome === 'succeeded' ? undefined : 'boom',
    });
    expect(done.status).toBe(200);
    return runId;
  }

  async function finished(operationId: string) {
    return eventually(async () => {
      const res = await get(`/bulk-operations/${operationId}`);
      expect(res.body.status).toBe('completed');
      return res.body;
    });
  }

  const minute = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, n));

  beforeAll(async () => {
    w = await startExecutionWorld('api');
    db = w.db;
    targetId = await w.createTarget({ deduplicates: true });
    otherTargetId = await w.createTarget();
    other = await w.t.createTenant('other');
  });
  afterAll(() => w.close());

  it('GET /runs searches the whole tenant with every filter, cursor-paginated', async () => {
    const a = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const b = await w.createSchedule(otherTargetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const failedA = await endedRun(a, minute(1), 'failed');
    const okA = await endedRun(a, minute(2), 'succeeded');
    const unknownB = await endedRun(b, minute(3), 'unknown');
    const queuedB = await w.insertRun(b, minute(4));
    const ids = (res: { body: { items: { id: string }[] } }) => res.body.items.map((r) => r.id);
    const range = 'scheduledFrom=2026-01-01T00:00:00Z&scheduledTo=2026-01-01T00:05:00Z';

    expect(ids(await get(`/runs?${range}`))).toEqual([failedA, okA, unknownB, queuedB]);
    expect(ids(await get(`/runs?${range}&state=FAILED`))).toEqual([failedA]);
    expect(ids(await get(`/runs?${range}&reason=outcome_unknown`))).toEqual([unknownB]);
    expect(ids(await get(`/runs?${range}&scheduleId=${b}`))).toEqual([unknownB, queuedB]);
    expect(ids(await get(`/runs?${range}&targetId=${targetId}`))).toEqual([failedA, okA]);
    expect(ids(await get(`/runs?${range}&trigger=schedule`))).toEqual([
      failedA,
      okA,
      unknownB,
      queuedB,
    ]);
    expect(ids(await get(`/runs?${range}&trigger=manual`))).toEqual([]);
    expect(
      ids(await get('/runs?scheduledFrom=2026-01-01T00:02:00Z&scheduledTo=2026-01-01T00:04:00Z')),
    ).toEqual([okA, unknownB]);
    const finishedSince = new Date(Date.now() - 60_000).toISOString();
    expect(ids(await get(`/runs?${range}&finishedFrom=${finishedSince}`))).toEqual([
      failedA,
      okA,
      unknownB,
    ]);
    expect(ids(await get(`/runs?${range}&finishedTo=${finishedSince}`))).toEqual([]);

    const page1 = await get(`/runs?${range}&limit=3`);
    expect(ids(page1)).toEqual([failedA, okA, unknownB]);
    const page2 = await get(`/runs?${range}&limit=3&cursor=${page1.body.nextCursor}`);
    expect(ids(page2)).toEqual([queuedB]);
    expect(page2.body.nextCursor).toBeNull();

    expect(ids(await get(`/runs?${range}`, other.apiKey))).toEqual([]);
  });

  it.each<[string, string]>([
    ['an unknown state', 'state=DONE'],
    ['an unknown reason', 'reason=because'],
    ['a malformed id', 'scheduleId=nope'],
    ['a backwards range', 'scheduledFrom=2026-01-02T00:00:00Z&scheduledTo=2026-01-01T00:00:00Z'],
    ['an unknown filter', 'colour=blue'],
  ])('GET /runs refuses %s with a 400 problem', async (_name, query) => {
    const res = await get(`/runs?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('replays FAILED and UNKNOWN runs as new linked runs that keep the idempotency key', async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const failed = await endedRun(schedule, minute(11), 'failed');
    const unknown = await endedRun(schedule, minute(12), 'unknown');
    const succeeded = await endedRun(schedule, minute(13), 'succeeded');
    const res = await post('/runs/replay', { filter: { scheduleId: schedule } });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ kind: 'replay', total: 3 });
    const done = await finished(res.body.id);
    expect(done).toMatchObject({ processed: 3, succeeded: 2, skipped: 1 });
    const items = (await get(`/bulk-operations/${res.body.id}/items`)).body.items;
    expect(items.map((i: { runId: string; outcome: string }) => [i.runId, i.outcome])).toEqual([
      [failed, 'replayed'],
      [unknown, 'replayed'],
      [succeeded, 'not_replayable'],
    ]);
    const original = await w.run(failed);
    const replay = await w.run(items[0].resultRunId);
    expect(replay).toMatchObject({
      trigger: 'replay',
      replayOf: failed,
      idempotencyKey: original.idempotencyKey,
      scheduledAt: original.scheduledAt,
      state: 'QUEUED',
      startDeadline: null,
    });
    expect(original.idempotencyKey).toBe(failed);
    // Admitted like any run: its job is in the queue, and its attempt carries the original's key.
    const claim = await post(`/runs/${replay.id}/claim`);
    expect(claim.status).toBe(200);
    expect(claim.body).toMatchObject({ runId: replay.id, idempotencyKey: failed });
    // The original is never replayed twice; a failed replay is replayed in turn, same key.
    await post(`/runs/${replay.id}/complete`, {
      fencingToken: claim.body.fencingToken,
      outcome: 'failed',
      retryable: false,
    });
    const again = await post('/runs/replay', { ids: [failed, replay.id] });
    await finished(again.body.id);
    // Selection order is (scheduledAt, id), and the replay stands for the original's instant.
    const second: Array<{ runId: string; outcome: string; resultRunId: string | null }> = (
      await get(`/bulk-operations/${again.body.id}/items`)
    ).body.items;
    const byRun = new Map(second.map((i) => [i.runId, i]));
    expect(byRun.get(failed)?.outcome).toBe('already_replayed');
    expect(byRun.get(replay.id)?.outcome).toBe('replayed');
    expect((await w.run(byRun.get(replay.id)!.resultRunId!)).idempotencyKey).toBe(failed);
  });

  it('two replays of one run racing create one replay run', async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const failed = await endedRun(schedule, minute(21), 'failed');
    const [a, b] = await Promise.all([
      post('/runs/replay', { ids: [failed] }),
      post('/runs/replay', { ids: [failed] }),
    ]);
    await finished(a.body.id);
    await finished(b.body.id);
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM occurrences WHERE replay_of = $1`,
      [failed],
    );
    expect(n).toBe(1);
    const outcomes = [
      ...(await get(`/bulk-operations/${a.body.id}/items`)).body.items,
      ...(await get(`/bulk-operations/${b.body.id}/items`)).body.items,
    ].map((i: { outcome: string }) => i.outcome);
    expect(outcomes.sort()).toEqual(['already_replayed', 'replayed']);
  });

  it('a replay racing a cancel: every replay run either runs or is cancelled, never both', async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
      overlapPolicy: 'allow',
    });
    const failures = [];
    for (let i = 0; i < 20; i++) failures.push(await endedRun(schedule, minute(30 + i), 'failed'));
    const replay = await post('/runs/replay', { ids: failures });
    // The cancel selects whatever replay runs exist when it is taken, and races the rest.
    const cancel = await post('/runs/cancel', {
      filter: { scheduleId: schedule, trigger: 'replay' },
      limit: 1000,
    });
    expect(cancel.status).toBe(202);
    const replayed = await finished(replay.body.id);
    const cancelled = await finished(cancel.body.id);
    expect(replayed).toMatchObject({ total: 20, succeeded: 20 });
    const rows = await db.query(
      `SELECT id, state, reason FROM occurrences WHERE replay_of = ANY($1::uuid[]) ORDER BY scheduled_at`,
      [failures],
    );
    expect(rows).toHaveLength(20);
    const cancelledRows = rows.filter((r: { state: string }) => r.state === 'CANCELLED');
    expect(cancelledRows.length).toBe(cancelled.succeeded);
    for (const row of rows) {
      expect(['QUEUED', 'CANCELLED']).toContain(row.state);
      const claim = await post(`/runs/${row.id}/claim`);
      if (row.state === 'CANCELLED') {
        expect(row.reason).toBe('cancelled_by_request');
        expect(claim.status).toBe(409);
        expect(claim.body.reason).toBe('finished');
      } else {
        expect(claim.status).toBe(200);
      }
    }
    // A second cancel over what is left stops the rest: the claimed ones are asked to stop.
    const rest = await post('/runs/cancel', {
      filter: { scheduleId: schedule, trigger: 'replay', state: 'RUNNING' },
    });
    const restDone = await finished(rest.body.id);
    expect(restDone.succeeded).toBe(20 - cancelledRows.length);
    const outcomes = (await get(`/bulk-operations/${rest.body.id}/items`)).body.items.map(
      (i: { outcome: string }) => i.outcome,
    );
    expect(new Set(outcomes)).toEqual(new Set(outcomes.length ? ['cancel_requested'] : []));
  });

  it('bulk cancel ends waiting runs and skips finished ones, with its counts', async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
      overlapPolicy: 'allow',
    });
    const waiting = [
      await w.insertRun(schedule, minute(51)),
      await w.insertRun(schedule, minute(52)),
    ];
    const done = await endedRun(schedule, minute(53), 'succeeded');
    const res = await post('/runs/cancel', { ids: [...waiting, done] });
    const op = await finished(res.body.id);
    expect(op).toMatchObject({ total: 3, processed: 3, succeeded: 2, skipped: 1 });
    for (const id of waiting) expect((await w.run(id)).state).toBe('CANCELLED');
    expect((await w.run(done)).state).toBe('SUCCEEDED');
  });

  it.each<[string, object]>([
    ['neither filter nor ids', {}],
    [
      'both filter and ids',
      { filter: { state: 'FAILED' }, ids: ['00000000-0000-4000-8000-000000000001'] },
    ],
    ['an empty filter (it would select every run)', { filter: {} }],
    ['a limit above 1000', { filter: { state: 'FAILED' }, limit: 1001 }],
    [
      'more than 1000 ids',
      { ids: Array.from({ length: 1001 }, () => '00000000-0000-4000-8000-000000000001') },
    ],
    ['a malformed id', { ids: ['nope'] }],
    ['an unknown filter field', { filter: { colour: 'blue' } }],
  ])('a bulk body with %s is a 400 problem and creates nothing', async (_name, body) => {
    const [{ n: before }] = await db.query('SELECT count(*)::int AS n FROM bulk_operations');
    for (const path of ['/runs/replay', '/runs/cancel']) {
      const res = await post(path, body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    const [{ n: after }] = await db.query('SELECT count(*)::int AS n FROM bulk_operations');
    expect(after).toBe(before);
  });

  it('an operation whose processor died is resumed (lease expired), each run processed once', async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const failures = [
      await endedRun(schedule, minute(55), 'failed'),
      await endedRun(schedule, minute(56), 'failed'),
    ];
    // As a replica that took the selection, replayed the first run and died would leave it.
    const [op] = await db.query(
      `INSERT INTO bulk_operations (tenant_id, kind, total, processed, succeeded, lease_until)
       VALUES ($1, 'replay', 2, 0, 0, now() - interval '1 second') RETURNING id`,
      [w.tenant.id],
    );
    await db.query(
      `INSERT INTO bulk_operation_items (operation_id, run_id, position) SELECT $1, x, o
         FROM unnest($2::uuid[]) WITH ORDINALITY AS u(x, o)`,
      [op.id, failures],
    );
    const service = w.t.app.get(BulkOperationsService);
    expect(await service.resumeStalled()).toBe(true);
    expect(await service.resumeStalled()).toBe(false);
    const done = await finished(op.id);
    expect(done).toMatchObject({ processed: 2, succeeded: 2 });
    const [{ n }] = await db.query(
      `SELECT count(*)::int AS n FROM occurrences WHERE replay_of = ANY($1::uuid[])`,
      [failures],
    );
    expect(n).toBe(2);
  });

  it("another tenant's runs are never selected, and its operation is a 404", async () => {
    const schedule = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    const failed = await endedRun(schedule, minute(58), 'failed');
    const res = await post('/runs/replay', { ids: [failed] }, other.apiKey);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ total: 0, status: 'completed' });
    expect((await get(`/bulk-operations/${res.body.id}`)).status).toBe(404);
    expect((await get(`/bulk-operations/${res.body.id}`, other.apiKey)).status).toBe(200);
  });
});
