import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { DataSource } from 'typeorm';
import { startTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

/**
 * Excess load is refused, not absorbed: a create or edit that would make one of the tenant's
 * projected minutes need more runs than its dispatchRatePerSecond allows in a minute is a 422
 * that names the minute and the numbers, and writes nothing; `low` schedules are exempt. The
 * projection is a maintained profile, read in GET /usage.
 */
describe('projected load and GET /usage', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api' });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  /** A tenant allowed `rate` runs a second, i.e. 60 × rate a minute. */
  async function tenant(rate: number) {
    const created = await t.createTenant(`load-${randomUUID().slice(0, 8)}`, {
      dispatchRatePerSecond: rate,
      maxActiveSchedules: 10_000,
    });
    const as = (req: Test) => req.set('Authorization', `Bearer ${created.apiKey}`);
    const target = await as(t.http.post('/targets')).send({
      name: 'hook',
      url: 'https://example.com/hook',
    });
    expect(target.status).toBe(201);
    const body = (extra: object) => ({ name: 's', targetId: target.body.id, ...extra });
    return {
      id: created.id,
      create: (extra: object) =>
        as(t.http.post('/schedules')).set('Idempotency-Key', randomUUID()).send(body(extra)),
      batch: (extras: object[]) =>
        as(t.http.post('/schedules/batch')).send({
          items: extras.map((extra) => ({ idempotencyKey: randomUUID(), schedule: body(extra) })),
        }),
      patch: (id: string, revision: number, change: object) =>
        as(t.http.patch(`/schedules/${id}`))
          .set('If-Match', String(revision))
          .send(change),
      cancel: (id: string) => as(t.http.delete(`/schedules/${id}`)),
      usage: () => as(t.http.get('/usage')),
    };
  }

  /** What a create writes for a tenant, table by table. */
  async function rowsOf(tenantId: string): Promise<Record<string, number>> {
    const [row] = await db.query(
      `SELECT (SELECT count(*)::int FROM schedules WHERE tenant_id = $1) AS schedules,
              (SELECT count(*)::int FROM due_index WHERE tenant_id = $1) AS due_entries,
              (SELECT count(*)::int FROM schedule_revisions WHERE tenant_id = $1) AS revisions,
              (SELECT count(*)::int FROM idempotency_keys WHERE tenant_id = $1) AS keys,
              (SELECT count(*)::int FROM schedule_load WHERE tenant_id = $1) AS loads`,
      [tenantId],
    );
    return row;
  }

  const everySecond = { cron: '* * * * * *', timezone: 'UTC', overlapPolicy: 'allow' };
  const everyMinute = { cron: '0 * * * * *', timezone: 'UTC', overlapPolicy: 'allow' };

  it('refuses the create that takes a minute past the rate, names it, and writes nothing', async () => {
    const a = await tenant(1);
    const full = await a.create(everySecond);
    expect(full.status).toBe(201);
    const before = await rowsOf(a.id);
    const refused = await a.create(everyMinute);
    expect(refused.status).toBe(422);
    expect(refused.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(refused.body).toMatchObject({ projectedRuns: 61, allowedRuns: 60 });
    expect(new Date(refused.body.minute).getUTCSeconds()).toBe(0);
    expect(refused.body.detail).toContain('dispatchRatePerSecond');
    // Its rows are written before the tenant's budgets are checked, and taken back.
    expect(await rowsOf(a.id)).toEqual(before);
    // Low priority agrees to wait: exempt, and not counted against the others.
    expect((await a.create({ ...everyMinute, priority: 'low' })).status).toBe(201);
    const usage = await a.usage();
    expect(usage.status).toBe(200);
    expect(usage.body).toMatchObject({
      tenantId: a.id,
      activeSchedules: 2,
      allowedRunsPerMinute: 60,
      waitingRuns: { throttled_concurrency: 0, throttled_rate: 0, throttled_fleet: 0 },
    });
    expect(usage.body.busiestMinutes).toHaveLength(5);
    expect(usage.body.busiestMinutes.every((m: { runs: number }) => m.runs === 60)).toBe(true);
    // Cancelling gives the minutes back: the refused schedule now fits.
    await a.cancel(full.body.id);
    expect((await a.usage()).body.busiestMinutes).toEqual([]);
    expect((await a.create(everyMinute)).status).toBe(201);
  });

  it('counts one-time runs by minute, also beyond the next 24 hours', async () => {
    const a = await tenant(1);
    const minute = new Date(Math.ceil((Date.now() + 3 * 86_400_000) / 60_000) * 60_000);
    const at = (s: number) => ({ runAt: new Date(minute.getTime() + s * 1000).toISOString() });
    const batch = await a.batch(Array.from({ length: 61 }, (_, i) => at(i % 60)));
    expect(batch.status).toBe(200);
    const statuses = batch.body.items.map((item: { status: number }) => item.status);
    expect(statuses.slice(0, 60)).toEqual(Array(60).fill(201));
    expect(statuses[60]).toBe(422);
    expect(batch.body.items[60].problem).toMatchObject({
      minute: minute.toISOString(),
      projectedRuns: 61,
      allowedRuns: 60,
    });
    // The next minute is another minute.
    expect((await a.create(at(60))).status).toBe(201);
  });

  it('holds the limit exactly under concurrent creates', async () => {
    const a = await tenant(1);
    const runAt = new Date(Math.ceil((Date.now() + 3_600_000) / 60_000) * 60_000).toISOString();
    const results = await Promise.all(Array.from({ length: 80 }, () => a.create({ runAt })));
    const codes = results.map((r) => r.status);
    expect(codes.filter((c) => c === 201)).toHaveLength(60);
    expect(codes.filter((c) => c === 422)).toHaveLength(20);
  });

  it('checks an edit against the profile without its own old load, and a resume too', async () => {
    const a = await tenant(1);
    const half = { cron: '*/2 * * * * *', timezone: 'UTC', overlapPolicy: 'allow' };
    const first = await a.create(half);
    const second = await a.create(half);
    expect([first.status, second.status]).toEqual([201, 201]);
    // Replacing its own 30 a minute by 60 would make 90: refused, the revision unchanged.
    const edit = await a.patch(first.body.id, first.body.revision, everySecond);
    expect(edit.status).toBe(422);
    expect(edit.body).toMatchObject({ projectedRuns: 90, allowedRuns: 60 });
    // An edit to the same load is fine (it is not counted twice).
    const renamed = await a.patch(first.body.id, first.body.revision, { name: 'renamed' });
    expect(renamed.status).toBe(200);
    // Paused, it adds nothing: room for a third; resuming the first would then overload.
    const paused = await a.patch(first.body.id, renamed.body.revision, { status: 'paused' });
    expect(paused.status).toBe(200);
    expect((await a.create(half)).status).toBe(201);
    const resumed = await a.patch(first.body.id, paused.body.revision, { status: 'active' });
    expect(resumed.status).toBe(422);
  });

  it('shows the admin any tenant, and only the admin', async () => {
    const a = await tenant(5);
    expect((await a.create(everyMinute)).status).toBe(201);
    const admin = await t.http
      .get(`/tenants/${a.id}/usage`)
      .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`);
    expect(admin.status).toBe(200);
    expect(admin.body).toMatchObject({
      tenantId: a.id,
      activeSchedules: 1,
      allowedRunsPerMinute: 300,
    });
    expect(admin.body.busiestMinutes[0].runs).toBe(1);
    const other = await tenant(1);
    expect(
      (await t.http.get('/usage').set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)).status,
    ).toBe(401);
    expect((await other.usage()).body.tenantId).toBe(other.id);
  });
});
