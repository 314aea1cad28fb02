import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { CreationRevisionOnSchedule1796660000000 } from '../../migrations/1796660000000-CreationRevisionOnSchedule';
import { apiKeyParts } from '../support/api-keys';
import { tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

describe('schedule revisions are history', () => {
  let t: TestApp;
  let db: DataSource;
  let make: Awaited<ReturnType<typeof tenantWithTarget>>;
  let other: Awaited<ReturnType<typeof tenantWithTarget>>;

  const auth = (req: import('supertest').Test, key = make.tenant.apiKey) =>
    req.set('Authorization', `Bearer ${key}`);
  const keyIdOf = (apiKey: string) => apiKeyParts(apiKey).keyId;
  const patch = (id: string, revision: number, body: object) =>
    auth(t.http.patch(`/schedules/${id}`))
      .set('If-Match', `"${revision}"`)
      .send(body);

  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
    make = await tenantWithTarget(t);
    other = await tenantWithTarget(t);
  });
  afterAll(() => t.close());

  it('keeps every revision with who changed it (the key id, never the key), when and what', async () => {
    const created = await auth(t.http.post('/schedules'))
      .set('Idempotency-Key', randomUUID())
      .send({ name: 'report', targetId: make.targetId, cron: '0 9 * * *', timezone: 'UTC' });
    const id = created.body.id as string;
    expect((await patch(id, 1, { cron: '0 10 * * *', labels: { team: 'a' } })).status).toBe(200);
    expect((await patch(id, 2, { status: 'paused' })).status).toBe(200);
    expect((await patch(id, 3, { status: 'active' })).status).toBe(200);
    // A refused edit (stale If-Match) and an invalid one leave no revision.
    expect((await patch(id, 1, { name: 'stale' })).status).toBe(409);
    expect((await patch(id, 4, { cron: 'nope' })).status).toBe(400);
    const cancelled = await auth(t.http.delete(`/schedules/${id}`)).set('If-Match', '"4"');
    expect(cancelled.status).toBe(200);

    const res = await auth(t.http.get(`/schedules/${id}/revisions`));
    expect(res.status).toBe(200);
    const keyId = keyIdOf(make.tenant.apiKey);
    expect(
      res.body.items.map((r: { revision: number; change: string }) => [r.revision, r.change]),
    ).toEqual([
      [5, 'cancelled'],
      [4, 'resumed'],
      [3, 'paused'],
      [2, 'edited'],
      [1, 'created'],
    ]);
    for (const revision of res.body.items) {
      expect(revision.changedByApiKeyId).toBe(keyId);
      expect(Date.parse(revision.changedAt)).toBeGreaterThan(0);
    }
    expect(JSON.stringify(res.body)).not.toContain(apiKeyParts(make.tenant.apiKey).secret);
    const edited = res.body.items[3];
    expect(edited.changes).toEqual([
      { field: 'cron', from: '0 9 * * *', to: '0 10 * * *' },
      { field: 'labels', from: {}, to: { team: 'a' } },
    ]);
    expect(edited.definition).toMatchObject({
      cron: '0 10 * * *',
      status: 'active',
      labels: { team: 'a' },
    });
    expect(res.body.items[2].changes).toEqual([{ field: 'status', from: 'active', to: 'paused' }]);
    expect(res.body.items[4]).toMatchObject({
      changes: [],
      definition: { cron: '0 9 * * *', status: 'active' },
    });
  });

  it('pages newest first with the cursor codec of every list', async () => {
    const created = await make.createSchedule({ cron: '0 9 * * *', timezone: 'UTC' });
    for (let revision = 1; revision <= 4; revision++) {
      expect((await patch(created.id, revision, { name: `n${revision}` })).status).toBe(200);
    }
    const first = await auth(t.http.get(`/schedules/${created.id}/revisions?limit=2`));
    expect(first.body.items.map((r: { revision: number }) => r.revision)).toEqual([5, 4]);
    const second = await auth(
      t.http.get(`/schedules/${created.id}/revisions?limit=2&cursor=${first.body.nextCursor}`),
    );
    expect(second.body.items.map((r: { revision: number }) => r.revision)).toEqual([3, 2]);
    const third = await auth(
      t.http.get(`/schedules/${created.id}/revisions?limit=2&cursor=${second.body.nextCursor}`),
    );
    expect(third.body.items.map((r: { revision: number }) => r.revision)).toEqual([1]);
    expect(third.body.nextCursor).toBeNull();
  });

  it('a run links to the revision it ran under, readable after later edits', async () => {
    const created = await make.createSchedule({
      cron: '0 9 * * *',
      timezone: 'UTC',
      payload: { v: 1 },
    });
    const run = await auth(t.http.post(`/schedules/${created.id}/trigger`));
    expect(run.status).toBe(201);
    expect(run.body.links.revision).toBe(`/schedules/${created.id}/revisions/1`);
    expect((await patch(created.id, 1, { payload: { v: 2 } })).status).toBe(200);
    const ranUnder = await auth(t.http.get(run.body.links.revision));
    expect(ranUnder.status).toBe(200);
    expect(ranUnder.body).toMatchObject({ revision: 1, definition: { payload: { v: 1 } } });
    const current = await auth(t.http.get(`/schedules/${created.id}/revisions/2`));
    expect(current.body.definition.payload).toEqual({ v: 2 });
  });

  it('another tenant, an unknown revision and a malformed one are the same 404', async () => {
    const created = await make.createSchedule({ cron: '0 9 * * *', timezone: 'UTC' });
    for (const [path, key] of [
      [`/schedules/${created.id}/revisions`, other.tenant.apiKey],
      [`/schedules/${created.id}/revisions/1`, other.tenant.apiKey],
      [`/schedules/${created.id}/revisions/7`, make.tenant.apiKey],
      [`/schedules/${created.id}/revisions/0x1`, make.tenant.apiKey],
    ]) {
      const res = await auth(t.http.get(path), key);
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });

  it('a batch create records revision 1 of each schedule it created, and none of a refused one', async () => {
    const res = await auth(t.http.post('/schedules/batch')).send({
      items: [
        {
          idempotencyKey: randomUUID(),
          schedule: { name: 'a', targetId: make.targetId, cron: '0 9 * * *', timezone: 'UTC' },
        },
        {
          idempotencyKey: randomUUID(),
          schedule: { name: 'b', targetId: randomUUID(), cron: '0 9 * * *', timezone: 'UTC' },
        },
      ],
    });
    expect(res.body.items.map((i: { status: number }) => i.status)).toEqual([201, 404]);
    const created = res.body.items[0].schedule;
    const history = await auth(t.http.get(`/schedules/${created.id}/revisions`));
    expect(history.body.items).toEqual([
      expect.objectContaining({
        revision: 1,
        change: 'created',
        changedByApiKeyId: keyIdOf(make.tenant.apiKey),
        changedAt: created.createdAt,
        definition: expect.objectContaining({ name: 'a', cron: '0 9 * * *', status: 'active' }),
      }),
    ]);
    // The refused item wrote nothing: no schedule, so no revision either.
    const [{ schedules }] = await db.query(
      `SELECT count(*)::int AS schedules FROM schedules WHERE tenant_id = $1 AND name = 'b'`,
      [make.tenant.id],
    );
    expect(schedules).toBe(0);
  });

  it('revision 1 reads the same from the schedule row before the first edit as from the history after it', async () => {
    const body = {
      name: 'every field',
      targetId: make.targetId,
      cron: '30 2 * * 1-5',
      timezone: 'Europe/Berlin',
      dstPolicy: { nonexistent: 'shift_forward', repeated: 'both' },
      payload: { nested: { b: 2, a: [1, 'x'] }, z: null },
      labels: { team: 'billing', tier: 'gold' },
      startAt: '2030-01-01T00:00:00.000Z',
      endAt: '2031-01-01T00:00:00.000Z',
      missedRunPolicy: 'all',
      overlapPolicy: 'skip',
      retryPolicy: { maxAttempts: 4, initialDelayMs: 2000, maxDelayMs: 30000 },
      priority: 'high',
      startDeadlineSeconds: 120,
      excludeDates: ['2030-12-25'],
      maxRuns: 10,
      pauseAfterConsecutiveFailures: 3,
      lateAfterSeconds: 45,
    };
    const created = await auth(t.http.post('/schedules'))
      .set('Idempotency-Key', randomUUID())
      .send(body);
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    // Nothing in the history yet: revision 1 is the row.
    const [{ stored }] = await db.query(
      `SELECT count(*)::int AS stored FROM schedule_revisions WHERE schedule_id = $1`,
      [id],
    );
    expect(stored).toBe(0);
    const fromRow = await auth(t.http.get(`/schedules/${id}/revisions/1`));
    expect(fromRow.status).toBe(200);
    expect(fromRow.body).toMatchObject({
      revision: 1,
      change: 'created',
      changedByApiKeyId: keyIdOf(make.tenant.apiKey),
      changedAt: created.body.createdAt,
      changes: [],
      note: null,
    });
    // The definition as the create gave it, field by field, and active.
    expect(fromRow.body.definition).toMatchObject({
      ...body,
      calendarId: null,
      runAt: null,
      everySeconds: null,
      anchorAt: null,
      status: 'active',
    });
    const listed = await auth(t.http.get(`/schedules/${id}/revisions`));
    expect(listed.body.items).toEqual([fromRow.body]);

    // The first edit writes revision 1 into the history from the row, then its own.
    expect((await patch(id, 1, { payload: { v: 2 }, labels: {} })).status).toBe(200);
    const rows = await db.query(
      `SELECT revision, id FROM schedule_revisions WHERE schedule_id = $1 ORDER BY revision`,
      [id],
    );
    expect(rows.map((r: { revision: number }) => r.revision)).toEqual([1, 2]);
    // Under the id it was read under (a page's cursor names it), the schedule's.
    expect(rows[0].id).toBe(id);
    const fromHistory = await auth(t.http.get(`/schedules/${id}/revisions/1`));
    expect(fromHistory.body).toEqual(fromRow.body);
    const after = await auth(t.http.get(`/schedules/${id}/revisions`));
    expect(after.body.items.map((r: { revision: number }) => r.revision)).toEqual([2, 1]);
    expect(after.body.items[1]).toEqual(fromRow.body);
    expect(after.body.items[0].changes).toEqual([
      { field: 'payload', from: body.payload, to: { v: 2 } },
      { field: 'labels', from: body.labels, to: {} },
    ]);
  });

  it('a schedule whose revision 1 is in the history already keeps that one through its first edit', async () => {
    // As every schedule created before revision 1 was kept on the row has it.
    const created = await make.createSchedule({ cron: '0 9 * * *', timezone: 'UTC' });
    const recordedAt = new Date('2026-01-02T03:04:05.000Z');
    await db.query(
      `INSERT INTO schedule_revisions (tenant_id, schedule_id, revision, change, changed_at, definition)
       VALUES ($1, $2, 1, 'recorded', $3, '{"name": "as recorded"}')`,
      [make.tenant.id, created.id, recordedAt],
    );
    const before = await auth(t.http.get(`/schedules/${created.id}/revisions`));
    expect(before.body.items).toEqual([
      expect.objectContaining({
        revision: 1,
        change: 'recorded',
        definition: { name: 'as recorded' },
      }),
    ]);
    expect((await patch(created.id, 1, { name: 'renamed' })).status).toBe(200);
    const after = await auth(t.http.get(`/schedules/${created.id}/revisions`));
    expect(
      after.body.items.map((r: { revision: number; change: string }) => [r.revision, r.change]),
    ).toEqual([
      [2, 'edited'],
      [1, 'recorded'],
    ]);
    expect(after.body.items[1]).toEqual(before.body.items[0]);
    expect(after.body.items[1].changedAt).toBe(recordedAt.toISOString());
  });

  it("reverting the migration writes each unedited schedule's revision 1 as the API served it", async () => {
    const created = await auth(t.http.post('/schedules'))
      .set('Idempotency-Key', randomUUID())
      .send({
        name: 'kept on the row',
        targetId: make.targetId,
        every: '90s',
        anchorAt: '2030-01-01T00:00:00.000Z',
        timezone: 'Asia/Kolkata',
        payload: { k: [1, 2] },
        labels: { a: 'b' },
      });
    expect(created.status).toBe(201);
    const served = await auth(t.http.get(`/schedules/${created.body.id}/revisions/1`));
    const runner = db.createQueryRunner();
    await runner.startTransaction();
    try {
      await new CreationRevisionOnSchedule1796660000000().down(runner);
      const [row] = await runner.query(
        `SELECT change, changed_by_key_id, changed_at, definition FROM schedule_revisions
          WHERE schedule_id = $1 AND revision = 1`,
        [created.body.id],
      );
      expect({
        change: row.change,
        changedByApiKeyId: row.changed_by_key_id,
        changedAt: row.changed_at.toISOString(),
        definition: row.definition,
      }).toEqual({
        change: served.body.change,
        changedByApiKeyId: served.body.changedByApiKeyId,
        changedAt: served.body.changedAt,
        definition: served.body.definition,
      });
    } finally {
      // DDL is transactional: the column comes back with the rollback.
      await runner.rollbackTransaction();
      await runner.release();
    }
  });
});
