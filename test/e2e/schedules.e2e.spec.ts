import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ManualClock } from '../support/manual-clock';
import { startTestApp, TestApp } from '../support/test-app';

describe('schedules API', () => {
  let t: TestApp;
  let tenant: { id: string; apiKey: string };
  let targetId: string;

  const auth = (req: import('supertest').Test, key = tenant.apiKey) =>
    req.set('Authorization', `Bearer ${key}`);
  const future = (ms: number) => new Date(Date.now() + ms).toISOString();
  const rows = async (table: string): Promise<number> =>
    (await t.app.get(DataSource).query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

  async function createTarget(key = tenant.apiKey): Promise<string> {
    const res = await auth(t.http.post('/targets'), key).send({
      name: `t-${randomUUID()}`,
      url: 'https://example.com/hook',
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  const post = (body: object, key = randomUUID(), apiKey = tenant.apiKey) =>
    auth(t.http.post('/schedules'), apiKey).set('Idempotency-Key', key).send(body);

  beforeAll(async () => {
    t = await startTestApp();
    tenant = await t.createTenant('acme', { maxActiveSchedules: 1000 });
    targetId = await createTarget();
  });
  afterAll(() => t.close());

  it('creates a cron schedule with its due-index entry, Location, ETag and links', async () => {
    const res = await post({
      name: 'nightly',
      targetId,
      cron: '0 9 * * *',
      timezone: 'Europe/Berlin',
    });
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe(`/schedules/${res.body.id}`);
    expect(res.headers.etag).toBe('"1"');
    expect(res.body).toMatchObject({
      revision: 1,
      status: 'active',
      dstPolicy: { nonexistent: 'skip', repeated: 'first' },
      missedRunPolicy: 'latest',
      overlapPolicy: 'skip',
      retryPolicy: {
        maxAttempts: 3,
        initialDelayMs: 1000,
        maxDelayMs: 300000,
        retryDeadlineSeconds: 3600,
      },
      links: { runs: `/schedules/${res.body.id}/runs` },
    });
    const nextDueAt = new Date(res.body.nextDueAt);
    expect(nextDueAt.getTime()).toBeGreaterThan(Date.now());
    // 09:00 in Berlin is 07:00Z or 08:00Z depending on DST.
    expect([7, 8]).toContain(nextDueAt.getUTCHours());
    const entries = await t.app
      .get(DataSource)
      .query('SELECT due_at, revision, shard FROM due_index WHERE schedule_id = $1', [res.body.id]);
    expect(entries).toHaveLength(1);
    expect(new Date(entries[0].due_at).toISOString()).toBe(res.body.nextDueAt);
    expect(entries[0].revision).toBe(1);
    expect(entries[0].shard).toBeGreaterThanOrEqual(0);
    expect(entries[0].shard).toBeLessThan(128);
  });

  it('keeps a priority and a start deadline, and refuses bad ones writing nothing', async () => {
    const res = await post({
      name: 'urgent',
      targetId,
      runAt: future(3600_000),
      priority: 'high',
      startDeadlineSeconds: 30,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ priority: 'high', startDeadlineSeconds: 30 });
    const plain = await post({ name: 'plain', targetId, runAt: future(3600_000) });
    expect(plain.body).toMatchObject({ priority: 'normal', startDeadlineSeconds: null });
    const before = await rows('schedules');
    for (const bad of [
      { priority: 'urgent' },
      { startDeadlineSeconds: 0 },
      { startDeadlineSeconds: 86_401 },
    ]) {
      const refused = await post({ name: 'bad', targetId, runAt: future(3600_000), ...bad });
      expect(refused.status).toBe(400);
      expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    expect(await rows('schedules')).toBe(before);
  });

  it('creates a one-time schedule due at runAt', async () => {
    const runAt = future(3600_000);
    const res = await post({ name: 'once', targetId, runAt, payload: { a: 1 } });
    expect(res.status).toBe(201);
    expect(res.body.nextDueAt).toBe(new Date(runAt).toISOString());
    expect(res.body.payload).toEqual({ a: 1 });
  });

  describe('Idempotency-Key', () => {
    it('replays the first answer for the same body', async () => {
      const key = randomUUID();
      const body = { name: 'idem', targetId, cron: '*/5 * * * *', timezone: 'UTC' };
      const first = await post(body, key);
      const again = await post(
        { timezone: 'UTC', cron: '*/5 * * * *', targetId, name: 'idem' },
        key,
      );
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
    });

    it('rejects the same key with another body (422) and writes nothing', async () => {
      const key = randomUUID();
      await post({ name: 'a', targetId, cron: '*/5 * * * *', timezone: 'UTC' }, key);
      const before = await rows('schedules');
      const res = await post({ name: 'b', targetId, cron: '*/5 * * * *', timezone: 'UTC' }, key);
      expect(res.status).toBe(422);
      expect(await rows('schedules')).toBe(before);
    });

    it('creates one schedule for concurrent requests with one key', async () => {
      const key = randomUUID();
      const body = { name: 'race', targetId, cron: '*/5 * * * *', timezone: 'UTC' };
      const results = await Promise.all(Array.from({ length: 8 }, () => post(body, key)));
      expect(results.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
      const n = await t.app
        .get(DataSource)
        .query(`SELECT count(*)::int AS n FROM schedules WHERE name = 'race'`);
      expect(n[0].n).toBe(1);
    });

    it('lets many concurrent creates of one tenant succeed (no deadlock)', async () => {
      const body = { name: 'parallel', targetId, cron: '0 9 * * *', timezone: 'UTC' };
      const results = await Promise.all(Array.from({ length: 16 }, () => post(body)));
      expect(results.map((r) => r.status)).toEqual(Array(16).fill(201));
      expect(new Set(results.map((r) => r.body.id)).size).toBe(16);
    });

    it('is required', async () => {
      const res = await auth(t.http.post('/schedules')).send({
        name: 'x',
        targetId,
        cron: '* * * * *',
        timezone: 'UTC',
      });
      expect(res.status).toBe(400);
      expect(res.body.errors[0].field).toBe('Idempotency-Key');
    });
  });

  describe('bad input answers a 4xx problem and writes nothing', () => {
    const cases: [string, () => object, number][] = [
      ['invalid cron', () => ({ name: 'x', targetId, cron: '61 * * * *', timezone: 'UTC' }), 400],
      ['garbage cron', () => ({ name: 'x', targetId, cron: 'every day', timezone: 'UTC' }), 400],
      [
        'unknown timezone',
        () => ({ name: 'x', targetId, cron: '0 9 * * *', timezone: 'Mars/Olympus' }),
        400,
      ],
      ['cron without timezone', () => ({ name: 'x', targetId, cron: '0 9 * * *' }), 400],
      ['runAt in the past', () => ({ name: 'x', targetId, runAt: '2020-01-01T00:00:00Z' }), 400],
      [
        'runAt beyond the horizon',
        () => ({ name: 'x', targetId, runAt: '2099-01-01T00:00:00Z' }),
        400,
      ],
      [
        'both runAt and cron',
        () => ({ name: 'x', targetId, runAt: future(60_000), cron: '* * * * *', timezone: 'UTC' }),
        400,
      ],
      ['neither runAt nor cron', () => ({ name: 'x', targetId }), 400],
      [
        'never-firing cron',
        () => ({ name: 'x', targetId, cron: '0 0 30 2 *', timezone: 'UTC' }),
        400,
      ],
      ['unknown field', () => ({ name: 'x', targetId, runAt: future(60_000), color: 'red' }), 400],
      ['wrong types', () => ({ name: 7, targetId, runAt: 'tomorrow', maxCatchUp: 'x' }), 400],
      [
        'payload not an object',
        () => ({ name: 'x', targetId, runAt: future(60_000), payload: [1, 2] }),
        400,
      ],
      [
        'payload too large',
        () => ({ name: 'x', targetId, runAt: future(60_000), payload: { b: 'x'.repeat(70_000) } }),
        413,
      ],
      ['unknown target', () => ({ name: 'x', targetId: randomUUID(), runAt: future(60_000) }), 404],
      ['oversized name', () => ({ name: 'n'.repeat(201), targetId, runAt: future(60_000) }), 400],
      [
        'control characters',
        () => ({ name: 'bad\u0000name', targetId, runAt: future(60_000) }),
        400,
      ],
      [
        'bad DST policy',
        () => ({
          name: 'x',
          targetId,
          cron: '0 9 * * *',
          timezone: 'UTC',
          dstPolicy: { repeated: 'twice' },
        }),
        400,
      ],
      [
        'endAt before startAt',
        () => ({
          name: 'x',
          targetId,
          cron: '0 9 * * *',
          timezone: 'UTC',
          startAt: future(2e9),
          endAt: future(1e9),
        }),
        400,
      ],
    ];

    it.each(cases)('%s', async (_label, body, status) => {
      const before = [
        await rows('schedules'),
        await rows('due_index'),
        await rows('idempotency_keys'),
      ];
      const res = await post(body());
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect([
        await rows('schedules'),
        await rows('due_index'),
        await rows('idempotency_keys'),
      ]).toEqual(before);
    });

    it("refuses another tenant's target (404) and writes nothing", async () => {
      const other = await t.createTenant('other');
      const foreignTarget = await createTarget(other.apiKey);
      const before = await rows('schedules');
      const res = await post({ name: 'x', targetId: foreignTarget, runAt: future(60_000) });
      expect(res.status).toBe(404);
      expect(await rows('schedules')).toBe(before);
    });
  });

  describe('reading', () => {
    it('reads one with its ETag and lists with a cursor that visits each exactly once', async () => {
      const own = await t.createTenant('lister');
      const target = await createTarget(own.apiKey);
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) {
        const res = await post(
          { name: `s${i}`, targetId: target, cron: '0 9 * * *', timezone: 'UTC' },
          randomUUID(),
          own.apiKey,
        );
        ids.push(res.body.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const res: import('supertest').Response = await auth(
          t.http.get('/schedules').query(cursor ? { limit: 3, cursor } : { limit: 3 }),
          own.apiKey,
        );
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.items.map((s: { id: string }) => s.id));
        cursor = res.body.nextCursor;
      } while (cursor);
      expect(seen).toEqual(ids);
      const one = await auth(t.http.get(`/schedules/${ids[0]}`), own.apiKey);
      expect(one.status).toBe(200);
      expect(one.headers.etag).toBe('"1"');
    });

    it('bounds limit and rejects foreign cursors', async () => {
      expect((await auth(t.http.get('/schedules').query({ limit: 101 }))).status).toBe(400);
      expect((await auth(t.http.get('/schedules').query({ cursor: 'nonsense' }))).status).toBe(400);
    });

    it('filters by status', async () => {
      const res = await auth(t.http.get('/schedules').query({ status: 'cancelled' }));
      expect(res.status).toBe(200);
      for (const s of res.body.items) expect(s.status).toBe('cancelled');
    });
  });

  describe('editing', () => {
    async function fresh(): Promise<{ id: string }> {
      const res = await post({ name: 'edit-me', targetId, cron: '0 9 * * *', timezone: 'UTC' });
      return { id: res.body.id };
    }

    it('needs If-Match (428), rejects a stale revision (409 with the current one)', async () => {
      const { id } = await fresh();
      expect((await auth(t.http.patch(`/schedules/${id}`)).send({ name: 'n' })).status).toBe(428);
      const ok = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '"1"')
        .send({ name: 'n2' });
      expect(ok.status).toBe(200);
      expect(ok.body.revision).toBe(2);
      expect(ok.headers.etag).toBe('"2"');
      const stale = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '"1"')
        .send({ name: 'n3' });
      expect(stale.status).toBe(409);
      expect(stale.body.currentRevision).toBe(2);
    });

    it('rewrites the due-index entry for the new revision in the same transaction', async () => {
      const { id } = await fresh();
      const res = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '1')
        .send({ cron: '30 10 * * *', timezone: 'Asia/Kolkata' });
      expect(res.status).toBe(200);
      const entries = await t.app
        .get(DataSource)
        .query('SELECT due_at, revision FROM due_index WHERE schedule_id = $1', [id]);
      expect(entries).toEqual([{ due_at: new Date(res.body.nextDueAt), revision: 2 }]);
      // 10:30 in Kolkata (+05:30, no DST) is 05:00Z.
      expect(new Date(res.body.nextDueAt).getUTCHours()).toBe(5);
      expect(new Date(res.body.nextDueAt).getUTCMinutes()).toBe(0);
    });

    it('pauses (no due entry), resumes, cancels; cancelled is terminal', async () => {
      const { id } = await fresh();
      const paused = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '1')
        .send({ status: 'paused' });
      expect(paused.body).toMatchObject({ status: 'paused', nextDueAt: null, revision: 2 });
      expect(
        await t.app.get(DataSource).query('SELECT 1 FROM due_index WHERE schedule_id = $1', [id]),
      ).toHaveLength(0);
      const resumed = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '2')
        .send({ status: 'active' });
      expect(resumed.body.status).toBe('active');
      expect(resumed.body.nextDueAt).not.toBeNull();
      const cancelled = await auth(t.http.delete(`/schedules/${id}`));
      expect(cancelled.status).toBe(200);
      expect(cancelled.body.status).toBe('cancelled');
      expect(
        await t.app.get(DataSource).query('SELECT 1 FROM due_index WHERE schedule_id = $1', [id]),
      ).toHaveLength(0);
      const edit = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', String(cancelled.body.revision))
        .send({ status: 'active' });
      expect(edit.status).toBe(409);
      // History stays readable.
      expect((await auth(t.http.get(`/schedules/${id}`))).body.status).toBe('cancelled');
    });

    it('refuses an invalid edit and changes nothing', async () => {
      const { id } = await fresh();
      const res = await auth(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '1')
        .send({ cron: 'nope' });
      expect(res.status).toBe(400);
      expect((await auth(t.http.get(`/schedules/${id}`))).body.revision).toBe(1);
    });
  });

  describe('preview', () => {
    it('applies the DST policy (America/New_York fall back, both)', async () => {
      const res = await auth(t.http.post('/schedules/preview')).send({
        cron: '30 1 * * *',
        timezone: 'America/New_York',
        dstPolicy: { repeated: 'both' },
        from: '2027-11-06T12:00:00Z',
        count: 3,
      });
      expect(res.status).toBe(200);
      // 01:30 EDT (-04:00) = 05:30Z, 01:30 EST (-05:00) = 06:30Z, then 01:30 EST on Nov 8.
      expect(res.body.items).toEqual([
        { at: '2027-11-07T05:30:00.000Z', local: '2027-11-07T01:30:00-04:00' },
        { at: '2027-11-07T06:30:00.000Z', local: '2027-11-07T01:30:00-05:00' },
        { at: '2027-11-08T06:30:00.000Z', local: '2027-11-08T01:30:00-05:00' },
      ]);
    });

    it('previews a stored schedule and bounds count', async () => {
      const created = await post({ name: 'p', targetId, cron: '0 */6 * * *', timezone: 'UTC' });
      const res = await auth(
        t.http.get(`/schedules/${created.body.id}/preview`).query({ count: 4 }),
      );
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(4);
      expect(res.body.items[0].at).toBe(created.body.nextDueAt);
      expect(
        (await auth(t.http.get(`/schedules/${created.body.id}/preview`).query({ count: 101 })))
          .status,
      ).toBe(400);
    });
  });

  it('enforces maxActiveSchedules with a 403 problem', async () => {
    const small = await t.createTenant('small', { maxActiveSchedules: 2 });
    const target = await createTarget(small.apiKey);
    const body = () => ({ name: 'q', targetId: target, cron: '0 9 * * *', timezone: 'UTC' });
    expect((await post(body(), randomUUID(), small.apiKey)).status).toBe(201);
    expect((await post(body(), randomUUID(), small.apiKey)).status).toBe(201);
    const over = await post(body(), randomUUID(), small.apiKey);
    expect(over.status).toBe(403);
    expect(over.body).toMatchObject({ quota: 'maxActiveSchedules', limit: 2 });
  });

  it("answers 404 on every route for another tenant's schedule", async () => {
    const created = await post({ name: 'mine', targetId, cron: '0 9 * * *', timezone: 'UTC' });
    const id = created.body.id;
    const other = await t.createTenant('intruder');
    const as = (req: import('supertest').Test) => auth(req, other.apiKey);
    const responses = [
      await as(t.http.get(`/schedules/${id}`)),
      await as(t.http.get(`/schedules/${id}/preview`)),
      await as(t.http.patch(`/schedules/${id}`))
        .set('If-Match', '1')
        .send({ name: 'stolen' }),
      await as(t.http.delete(`/schedules/${id}`)),
      await as(t.http.get('/schedules/not-a-uuid')),
    ];
    expect(responses.map((r) => r.status)).toEqual([404, 404, 404, 404, 404]);
    const list = await as(t.http.get('/schedules'));
    expect(list.body.items.map((s: { id: string }) => s.id)).not.toContain(id);
    expect((await auth(t.http.get(`/schedules/${id}`))).body.name).toBe('mine');
  });

  it('rate limits management calls per tenant with 429 and Retry-After', async () => {
    // Time stands still unless the test moves it: the burst and the refill are exact.
    const clock = new ManualClock();
    const limited = await startTestApp(
      { MANAGEMENT_RATE_PER_SECOND: '1', MANAGEMENT_BURST: '3' },
      { clock },
    );
    try {
      const busy = await limited.createTenant('busy');
      const calm = await limited.createTenant('calm');
      const get = (key: string) =>
        limited.http.get('/schedules').set('Authorization', `Bearer ${key}`);
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await get(busy.apiKey)).status);
      expect(statuses).toEqual([200, 200, 200, 429, 429]);
      const limitedRes = await get(busy.apiKey);
      expect(limitedRes.status).toBe(429);
      expect(Number(limitedRes.headers['retry-after'])).toBe(1);
      expect(limitedRes.headers['content-type']).toMatch(/^application\/problem\+json/);
      // Another tenant is not affected.
      expect((await get(calm.apiKey)).status).toBe(200);
      // One second refills one call, not more.
      clock.advance(1000);
      expect((await get(busy.apiKey)).status).toBe(200);
      expect((await get(busy.apiKey)).status).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
