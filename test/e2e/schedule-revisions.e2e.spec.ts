import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
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
    const rows = await db.query(
      `SELECT r.change, r.changed_by_key_id FROM schedule_revisions r WHERE r.schedule_id = $1`,
      [res.body.items[0].schedule.id],
    );
    expect(rows).toEqual([{ change: 'created', changed_by_key_id: keyIdOf(make.tenant.apiKey) }]);
    const [{ orphans }] = await db.query(
      `SELECT count(*)::int AS orphans FROM schedules s
        WHERE NOT EXISTS (SELECT 1 FROM schedule_revisions r WHERE r.schedule_id = s.id AND r.revision = s.revision)`,
    );
    expect(orphans).toBe(0);
  });
});
