import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { SchedulesService, type ScheduleInput } from '../../src/schedules';
import { TenantsService } from '../../src/tenants';
import { startTestApp, TestApp } from '../support/test-app';

describe('POST /schedules/batch', () => {
  let t: TestApp;
  let db: DataSource;
  let apiKey: string;
  let targetId: string;

  const as = (req: import('supertest').Test) => req.set('Authorization', `Bearer ${apiKey}`);
  const batch = (body: unknown) => as(t.http.post('/schedules/batch')).send(body as object);
  const cron = (name = 'b') => ({ name, targetId, cron: '0 9 * * *', timezone: 'UTC' });
  const item = (schedule: object, idempotencyKey: string = randomUUID()) => ({
    idempotencyKey,
    schedule,
  });
  const rows = async (table: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  const written = async () => [
    await rows('schedules'),
    await rows('due_index'),
    await rows('idempotency_keys'),
  ];

  beforeAll(async () => {
    t = await startTestApp();
    db = t.app.get(DataSource);
    ({ apiKey } = await t.createTenant('batcher', { maxActiveSchedules: 100_000 }));
    const target = await as(t.http.post('/targets')).send({
      name: 'hook',
      url: 'https://example.com/hook',
    });
    targetId = target.body.id;
  });
  afterAll(() => t.close());

  it('creates each item with its due entry and answers 201 with the schedule, in order', async () => {
    const runAt = new Date(Date.now() + 3_600_000).toISOString();
    const res = await batch({
      items: [item(cron('first')), item({ name: 'second', targetId, runAt, payload: { n: 2 } })],
    });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body.items).toHaveLength(2);
    const [first, second] = res.body.items;
    expect(first).toMatchObject({ status: 201, schedule: { name: 'first', revision: 1 } });
    expect(second).toMatchObject({
      status: 201,
      schedule: { name: 'second', runAt, nextDueAt: runAt, payload: { n: 2 }, status: 'active' },
    });
    expect(first.problem).toBeUndefined();
    const read = await as(t.http.get(`/schedules/${second.schedule.id}`));
    expect(read.body).toEqual(second.schedule);
    const entries = await db.query(
      'SELECT schedule_id, revision FROM due_index WHERE schedule_id = ANY($1) ORDER BY 1',
      [[first.schedule.id, second.schedule.id]],
    );
    expect(entries).toHaveLength(2);
  });

  it('answers each bad item with its own problem and writes nothing for it; the rest commit', async () => {
    const before = await written();
    const res = await batch({
      items: [
        item(cron('ok-1')),
        item({ name: 'x', targetId, cron: '61 * * * *', timezone: 'UTC' }),
        item({ ...cron('x'), color: 'red' }),
        item({ name: 7, targetId }),
        item({ ...cron('x'), targetId: randomUUID() }),
        item({ ...cron('x'), payload: { big: 'x'.repeat(70_000) } }),
        item(cron('ok-2')),
      ],
    });
    expect(res.status).toBe(200);
    const statuses = res.body.items.map((i: { status: number }) => i.status);
    expect(statuses).toEqual([201, 400, 400, 400, 404, 413, 201]);
    const problems = res.body.items.map((i: { problem?: { type: string } }) => i.problem);
    expect(problems[1]).toMatchObject({
      type: 'https://dueline.dev/problems/validation',
      status: 400,
      errors: [{ field: 'cron' }],
    });
    expect(problems[2].errors.map((e: { field: string }) => e.field)).toContain('color');
    expect(problems[3].errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['name']),
    );
    expect(problems[4]).toMatchObject({ type: 'https://dueline.dev/problems/not-found' });
    expect(problems[5]).toMatchObject({ type: 'https://dueline.dev/problems/payload-too-large' });
    expect(await written()).toEqual(before.map((n) => n + 2));
  });

  describe('Idempotency-Key per item', () => {
    it('replays an earlier answer for the same body, from a batch or a single create', async () => {
      const single = randomUUID();
      const created = await as(t.http.post('/schedules'))
        .set('Idempotency-Key', single)
        .send(cron('single'));
      expect(created.status).toBe(201);
      const key = randomUUID();
      const first = await batch({ items: [item(cron('again'), key)] });
      const before = await written();
      const again = await batch({
        items: [
          item({ timezone: 'UTC', cron: '0 9 * * *', targetId, name: 'again' }, key),
          item(cron('single'), single),
        ],
      });
      expect(again.body.items).toEqual([
        first.body.items[0],
        { status: 201, schedule: created.body },
      ]);
      expect(await written()).toEqual(before);
    });

    it('refuses the same key with another body (422) and still commits the others', async () => {
      const key = randomUUID();
      await batch({ items: [item(cron('one'), key)] });
      const before = await written();
      const res = await batch({ items: [item(cron('other'), key), item(cron('fresh'))] });
      expect(res.body.items.map((i: { status: number }) => i.status)).toEqual([422, 201]);
      expect(res.body.items[0].problem).toMatchObject({
        type: 'https://dueline.dev/problems/idempotency-key-reused',
      });
      expect(await written()).toEqual(before.map((n) => n + 1));
    });

    it('creates one schedule per key when batches that share keys race (no deadlock)', async () => {
      const keys = Array.from({ length: 20 }, () => randomUUID());
      const bodies = keys.map((key, i) => item(cron(`race-${i}`), key));
      const answers = await Promise.all(
        Array.from({ length: 6 }, (_, n) =>
          batch({ items: n % 2 ? [...bodies].reverse() : bodies }),
        ),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(200);
        expect(answer.body.items.every((i: { status: number }) => i.status === 201)).toBe(true);
      }
      const ids = new Set(
        answers.flatMap((a) =>
          a.body.items.map((i: { schedule: { id: string } }) => i.schedule.id),
        ),
      );
      expect(ids.size).toBe(20);
      const [n] = await db.query(
        `SELECT count(*)::int AS n FROM schedules WHERE name LIKE 'race-%'`,
      );
      expect(n.n).toBe(20);
    });
  });

  describe('a malformed envelope is a 400 for the whole request and writes nothing', () => {
    const cases: Array<[string, () => unknown]> = [
      ['items missing', () => ({})],
      ['items not an array', () => ({ items: { a: 1 } })],
      ['no items', () => ({ items: [] })],
      [
        'more than 1,000 items',
        () => ({ items: Array.from({ length: 1001 }, () => item(cron())) }),
      ],
      ['duplicate keys', () => ({ items: [item(cron(), 'same'), item(cron(), 'same')] })],
      ['an item without a key', () => ({ items: [{ schedule: cron() }] })],
      ['a key with a space', () => ({ items: [item(cron(), 'has space')] })],
      ['a schedule that is not an object', () => ({ items: [item([1, 2] as unknown as object)] })],
      ['an unknown envelope field', () => ({ items: [item(cron())], atomic: true })],
      ['an unknown item field', () => ({ items: [{ ...item(cron()), status: 201 }] })],
      ['a body that is an array', () => [item(cron())]],
    ];
    it.each(cases)('%s', async (_label, body) => {
      const before = await written();
      const res = await batch(body());
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(await written()).toEqual(before);
    });
  });

  describe('body limit', () => {
    it('reads bodies past the 256 KiB of other routes: 1,000 items with 1 KiB payloads', async () => {
      const payload = { text: 'p'.repeat(1000) };
      const items = Array.from({ length: 1000 }, (_, i) => item({ ...cron(`big-${i}`), payload }));
      const res = await batch({ items });
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(1000);
      expect(res.body.items.every((i: { status: number }) => i.status === 201)).toBe(true);
    });

    it('answers a 413 problem past 4 MiB and writes nothing', async () => {
      const before = await written();
      const payload = { text: 'p'.repeat(5000) };
      const items = Array.from({ length: 900 }, () => item({ ...cron(), payload }));
      const res = await batch({ items });
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ type: 'https://dueline.dev/problems/payload-too-large' });
      expect(await written()).toEqual(before);
    });

    it('keeps 256 KiB on POST /schedules', async () => {
      const res = await as(t.http.post('/schedules'))
        .set('Idempotency-Key', randomUUID())
        .send({ ...cron(), payload: { text: 'p'.repeat(300_000) } });
      expect(res.status).toBe(413);
    });
  });

  it('answers each created schedule exactly as it is stored', async () => {
    // What a create answers is the row it inserted, every field of it (RETURNING *).
    const tenantId = (await as(t.http.get('/usage'))).body.tenantId as string;
    const tenant = await t.app.get(TenantsService).get(tenantId);
    const schedules = t.app.get(SchedulesService);
    const inputs: ScheduleInput[] = [
      { name: 'once', targetId, runAt: new Date(Date.now() + 3_600_000) },
      {
        name: 'cron',
        targetId,
        cron: '30 2 * * 1-5',
        timezone: 'Europe/Berlin',
        dstPolicy: { nonexistent: 'shift_forward', repeated: 'both' },
        payload: { z: 1, a: { y: [1, 'two', null], b: true } },
        labels: { team: 'billing' },
        startAt: new Date('2030-01-01T00:00:00.123Z'),
        endAt: new Date('2031-01-01T00:00:00.000Z'),
        missedRunPolicy: 'all',
        maxCatchUp: 3,
        overlapPolicy: 'skip',
        retryPolicy: { maxAttempts: 5, initialDelayMs: 250, maxDelayMs: 9000 },
        priority: 'high',
        startDeadlineSeconds: 30,
        flexibleWindowSeconds: 20,
        excludeDates: ['2030-12-25'],
        maxRuns: 7,
        pauseAfterConsecutiveFailures: 2,
        lateAfterSeconds: 15,
      },
      { name: 'every', targetId, every: 5400, timezone: 'Asia/Kolkata' },
    ];
    const outcomes = await schedules.createBatch(
      tenant,
      inputs.map((input) => ({
        idempotencyKey: randomUUID(),
        requestBody: input,
        input,
        actor: { apiKeyId: 'key-of-the-test' },
      })),
    );
    expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined, undefined]);
    // Time-ordered ids (version 7): a batch's rows land together in the id index.
    for (const outcome of outcomes) expect(outcome.schedule!.id[14]).toBe('7');
    for (const outcome of outcomes) {
      const stored = await schedules.get(tenantId, outcome.schedule!.id);
      expect(outcome.schedule).toEqual(stored);
      expect(stored.createdByApiKeyId).toBe('key-of-the-test');
    }
  });
});
