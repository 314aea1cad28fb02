import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually } from '../support/eventually';
import { startTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

/**
 * maxActiveSchedules is kept as a per-tenant count of live schedules (tenant_schedule_counts),
 * moved in the transaction of every create, cancel and completion. These tests hold the quota
 * exactly under concurrency and hold the count to the schedules it counts.
 */
describe('maxActiveSchedules quota (maintained count)', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    // The poller completes one-time schedules, which gives their slots back.
    t = await startTestApp({ ROLES: 'api,poller', POLLER_LEASE_SECONDS: '3' });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  async function tenant(maxActiveSchedules: number) {
    const created = await t.createTenant(`q-${randomUUID().slice(0, 8)}`, { maxActiveSchedules });
    const target = await t.http
      .post('/targets')
      .set('Authorization', `Bearer ${created.apiKey}`)
      .send({ name: 'hook', url: 'https://example.com/hook' });
    expect(target.status).toBe(201);
    const as = (req: import('supertest').Test) =>
      req.set('Authorization', `Bearer ${created.apiKey}`);
    const cron = (name = 'c') => ({
      name,
      targetId: target.body.id,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    return {
      id: created.id,
      apiKey: created.apiKey,
      targetId: target.body.id as string,
      cron,
      create: (body: object = cron(), key = randomUUID()) =>
        as(t.http.post('/schedules')).set('Idempotency-Key', key).send(body),
      batch: (items: object[]) => as(t.http.post('/schedules/batch')).send({ items }),
      cancel: (id: string) => as(t.http.delete(`/schedules/${id}`)),
      patch: (id: string, revision: number, body: object) =>
        as(t.http.patch(`/schedules/${id}`))
          .set('If-Match', String(revision))
          .send(body),
    };
  }

  /** The maintained count and the count it stands for. */
  async function counts(tenantId: string): Promise<{ kept: number; real: number }> {
    const [kept] = await db.query('SELECT live FROM tenant_schedule_counts WHERE tenant_id = $1', [
      tenantId,
    ]);
    const [real] = await db.query(
      `SELECT count(*)::int AS n FROM schedules
        WHERE tenant_id = $1 AND status IN ('active', 'paused')`,
      [tenantId],
    );
    return { kept: kept?.live ?? 0, real: real.n };
  }

  it('admits exactly the quota from 30 concurrent creates (10 of 30)', async () => {
    const q = await tenant(10);
    const answers = await Promise.all(Array.from({ length: 30 }, () => q.create()));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    expect(statuses.filter((s) => s === 403)).toHaveLength(20);
    const refused = answers.find((a) => a.status === 403)!;
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.body).toMatchObject({ quota: 'maxActiveSchedules', limit: 10 });
    expect(await counts(q.id)).toEqual({ kept: 10, real: 10 });
    // A refused create wrote nothing, its key included: the same request may be retried later.
    const [keys] = await db.query(
      'SELECT count(*)::int AS n FROM idempotency_keys WHERE tenant_id = $1',
      [q.id],
    );
    expect(keys.n).toBe(10);
  });

  it('admits exactly the quota when two replicas race, singles and batches (12 of 40)', async () => {
    const q = await tenant(12);
    // Another replica gathers its own creates: the two meet only at the counter row.
    const other = await startTestApp({ ROLES: 'api' }, { database: t.database });
    try {
      const single = (app: TestApp) =>
        app.http
          .post('/schedules')
          .set('Authorization', `Bearer ${q.apiKey}`)
          .set('Idempotency-Key', randomUUID())
          .send(q.cron())
          .then((res) => [res.status]);
      const batch = (app: TestApp) =>
        app.http
          .post('/schedules/batch')
          .set('Authorization', `Bearer ${q.apiKey}`)
          .send({
            items: Array.from({ length: 5 }, () => ({
              idempotencyKey: randomUUID(),
              schedule: q.cron(),
            })),
          })
          .then((res) => res.body.items.map((item: { status: number }) => item.status));
      const answers = await Promise.all([
        ...Array.from({ length: 10 }, (_, i) => single(i % 2 ? t : other)),
        ...Array.from({ length: 6 }, (_, i) => batch(i % 2 ? t : other)),
      ]);
      const statuses = answers.flat();
      expect(statuses).toHaveLength(40);
      expect(statuses.filter((s) => s === 201)).toHaveLength(12);
      expect(statuses.filter((s) => s === 403)).toHaveLength(28);
      expect(await counts(q.id)).toEqual({ kept: 12, real: 12 });
    } finally {
      await other.close();
    }
  });

  it('frees a slot when a schedule is cancelled (DELETE or PATCH status cancelled)', async () => {
    const q = await tenant(2);
    const first = await q.create();
    const second = await q.create();
    expect((await q.create()).status).toBe(403);
    expect((await q.cancel(first.body.id)).status).toBe(200);
    expect((await q.create()).status).toBe(201);
    expect((await q.create()).status).toBe(403);
    expect((await q.patch(second.body.id, 1, { status: 'cancelled' })).status).toBe(200);
    expect((await q.create()).status).toBe(201);
    // Cancelling twice is refused (409) and gives nothing back twice.
    expect((await q.cancel(first.body.id)).status).toBe(409);
    expect(await counts(q.id)).toEqual({ kept: 2, real: 2 });
  });

  it('keeps a paused schedule counted and a resumed one counted once', async () => {
    const q = await tenant(1);
    const only = await q.create();
    expect((await q.patch(only.body.id, 1, { status: 'paused' })).status).toBe(200);
    expect((await q.create()).status).toBe(403);
    expect((await q.patch(only.body.id, 2, { status: 'active' })).status).toBe(200);
    expect((await q.create()).status).toBe(403);
    expect(await counts(q.id)).toEqual({ kept: 1, real: 1 });
  });

  it('frees the slot of a one-time schedule once the poller completes it', async () => {
    const q = await tenant(1);
    const once = await q.create({
      name: 'soon',
      targetId: q.targetId,
      runAt: new Date(Date.now() + 1200).toISOString(),
    });
    expect(once.status).toBe(201);
    expect((await q.create()).status).toBe(403);
    await eventually(
      async () => {
        const [row] = await db.query('SELECT status FROM schedules WHERE id = $1', [once.body.id]);
        expect(row.status).toBe('completed');
      },
      { timeoutMs: 15_000 },
    );
    expect(await counts(q.id)).toEqual({ kept: 0, real: 0 });
    expect((await q.create()).status).toBe(201);
  });

  it('admits what fits of a batch, in item order, and refuses the rest with 403 each', async () => {
    const q = await tenant(5);
    for (let i = 0; i < 3; i++) expect((await q.create()).status).toBe(201);
    const keys = Array.from({ length: 4 }, () => randomUUID());
    const res = await q.batch(
      keys.map((k, i) => ({ idempotencyKey: k, schedule: q.cron(`b${i}`) })),
    );
    expect(res.status).toBe(200);
    expect(res.body.items.map((i: { status: number }) => i.status)).toEqual([201, 201, 403, 403]);
    expect(res.body.items[2].problem).toMatchObject({
      status: 403,
      quota: 'maxActiveSchedules',
      limit: 5,
    });
    expect(await counts(q.id)).toEqual({ kept: 5, real: 5 });
    // The refused items left no trace: after a cancel, the same key creates.
    await q.cancel(res.body.items[0].schedule.id);
    const retried = await q.batch([{ idempotencyKey: keys[2], schedule: q.cron('b2') }]);
    expect(retried.body.items[0].status).toBe(201);
    const [names] = await db.query(
      `SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1 AND name = 'b3'`,
      [q.id],
    );
    expect(names.n).toBe(0);
    const [entries] = await db.query(
      `SELECT count(*)::int AS n FROM due_index d
         LEFT JOIN schedules s ON s.id = d.schedule_id
        WHERE d.tenant_id = $1 AND s.id IS NULL`,
      [q.id],
    );
    expect(entries.n).toBe(0);
  });

  it('refuses creates, not counts, when the quota is lowered below the live count', async () => {
    const q = await tenant(3);
    for (let i = 0; i < 3; i++) expect((await q.create()).status).toBe(201);
    const lowered = await t.http
      .patch(`/tenants/${q.id}`)
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
      .send({ quotas: { maxActiveSchedules: 1 } });
    expect(lowered.status).toBe(200);
    expect((await q.create()).status).toBe(403);
    const batch = await q.batch([{ idempotencyKey: randomUUID(), schedule: q.cron() }]);
    expect(batch.body.items[0].status).toBe(403);
    expect(await counts(q.id)).toEqual({ kept: 3, real: 3 });
  });

  it('keeps the count equal to the real count through a mixed concurrent workload', async () => {
    const a = await tenant(40);
    const b = await tenant(25);
    type Quota = typeof a;
    const created: Array<{ q: Quota; id: string }> = [];
    const soon = (q: Quota) => ({
      name: 'soon',
      targetId: q.targetId,
      runAt: new Date(Date.now() + 1000 + Math.random() * 1000).toISOString(),
    });
    const work = async (q: Quota, lane: number) => {
      for (let i = 0; i < 12; i++) {
        const step = (lane + i) % 4;
        const mine = created.filter((c) => c.q === q);
        if (step === 0) {
          const res = await q.create(i % 3 === 0 ? soon(q) : q.cron());
          if (res.status === 201) created.push({ q, id: res.body.id });
        } else if (step === 1) {
          const items = Array.from({ length: 4 }, (_, k) => ({
            idempotencyKey: randomUUID(),
            schedule: k === 0 ? soon(q) : q.cron(),
          }));
          const res = await q.batch(items);
          for (const item of res.body.items) {
            if (item.status === 201) created.push({ q, id: item.schedule.id });
          }
        } else if (step === 2) {
          const victim = mine[i % 5];
          if (victim) await q.cancel(victim.id);
        } else {
          const victim = mine[(i + 2) % 7];
          if (victim) await q.patch(victim.id, 1, { status: 'paused' });
        }
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].flatMap((lane) => [work(a, lane), work(b, lane)]));
    // One-time schedules complete in the poller meanwhile and afterwards.
    await eventually(
      async () => {
        const [due] = await db.query(
          `SELECT count(*)::int AS n FROM schedules
            WHERE tenant_id = ANY($1) AND kind = 'once' AND status = 'active'`,
          [[a.id, b.id]],
        );
        expect(due.n).toBe(0);
      },
      { timeoutMs: 20_000 },
    );
    for (const [q, max] of [
      [a, 40],
      [b, 25],
    ] as const) {
      const { kept, real } = await counts(q.id);
      expect(kept).toBe(real);
      expect(real).toBeLessThanOrEqual(max);
    }
    const [completed] = await db.query(
      `SELECT count(*)::int AS n FROM schedules WHERE tenant_id = ANY($1) AND status = 'completed'`,
      [[a.id, b.id]],
    );
    expect(completed.n).toBeGreaterThan(0);
  });
});
