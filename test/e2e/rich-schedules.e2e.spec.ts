import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually } from '../support/eventually';
import { tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

describe('richer schedules: cron forms, labels, intervals, excluded dates, maxRuns', () => {
  let t: TestApp;
  let db: DataSource;
  let make: Awaited<ReturnType<typeof tenantWithTarget>>;
  let other: Awaited<ReturnType<typeof tenantWithTarget>>;

  const auth = (req: import('supertest').Test, key = make.tenant.apiKey) =>
    req.set('Authorization', `Bearer ${key}`);
  const post = (body: object, as = make) =>
    auth(t.http.post('/schedules'), as.tenant.apiKey)
      .set('Idempotency-Key', randomUUID())
      .send({ name: 's', targetId: as.targetId, ...body });
  const preview = (body: object) => auth(t.http.post('/schedules/preview')).send(body);
  const count = async (table: string): Promise<number> =>
    (await db.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n;
  const ats = (res: { body: { items: { at: string; local: string }[] } }) =>
    res.body.items.map((i) => `${i.at} ${i.local}`);

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api,poller' });
    db = t.app.get(DataSource);
    make = await tenantWithTarget(t);
    other = await tenantWithTarget(t);
  });
  afterAll(() => t.close());

  describe('cron forms', () => {
    it.each<[string, string, string[]]>([
      [
        '0 9 L * *',
        'Europe/Berlin',
        [
          '2027-01-31T08:00:00.000Z 2027-01-31T09:00:00+01:00',
          '2027-02-28T08:00:00.000Z 2027-02-28T09:00:00+01:00',
          '2027-03-31T07:00:00.000Z 2027-03-31T09:00:00+02:00',
        ],
      ],
      [
        '0 9 * * 5L',
        'UTC',
        [
          '2027-01-29T09:00:00.000Z 2027-01-29T09:00:00+00:00',
          '2027-02-26T09:00:00.000Z 2027-02-26T09:00:00+00:00',
          '2027-03-26T09:00:00.000Z 2027-03-26T09:00:00+00:00',
        ],
      ],
      [
        '0 9 * * MON#2',
        'America/New_York',
        [
          '2027-01-11T14:00:00.000Z 2027-01-11T09:00:00-05:00',
          '2027-02-08T14:00:00.000Z 2027-02-08T09:00:00-05:00',
          '2027-03-08T14:00:00.000Z 2027-03-08T09:00:00-05:00',
        ],
      ],
      [
        '0 9 15W 5,8,9 *',
        'UTC',
        [
          '2027-05-14T09:00:00.000Z 2027-05-14T09:00:00+00:00',
          '2027-08-16T09:00:00.000Z 2027-08-16T09:00:00+00:00',
          '2027-09-15T09:00:00.000Z 2027-09-15T09:00:00+00:00',
        ],
      ],
      [
        '@monthly',
        'Asia/Tokyo',
        [
          '2027-01-31T15:00:00.000Z 2027-02-01T00:00:00+09:00',
          '2027-02-28T15:00:00.000Z 2027-03-01T00:00:00+09:00',
          '2027-03-31T15:00:00.000Z 2027-04-01T00:00:00+09:00',
        ],
      ],
    ])('%s in %s previews its exact instants and is accepted', async (cron, timezone, expected) => {
      const res = await preview({ cron, timezone, from: '2027-01-01T00:00:00Z', count: 3 });
      expect(res.status).toBe(200);
      expect(ats(res)).toEqual(expected);
      const created = await post({ cron, timezone });
      expect(created.status).toBe(201);
      expect(created.body.cron).toBe(cron);
    });

    it('day-of-month and day-of-week both restricted: either matches (Vixie), in preview', async () => {
      const res = await preview({
        cron: '0 9 13 * MON#2',
        timezone: 'UTC',
        from: '2027-01-01T00:00:00Z',
        count: 3,
      });
      expect(res.body.items.map((i: { at: string }) => i.at.slice(0, 10))).toEqual([
        '2027-01-11',
        '2027-01-13',
        '2027-02-08',
      ]);
    });

    it.each<[string, RegExp]>([
      ['0 9 L-31 * *', /L-n takes n from 1 to 30/],
      ['0 9 * * MON#6', /nth weekday takes n from 1 to 5/],
      ['0 9 32W * *', /nW takes a day from 1 to 31/],
      ['@reboot', /Unknown cron macro/],
      ['@every 5m', /interval schedule/],
      ['0 0 L-30 2 *', /never fires/],
    ])('refuses %s with a 400 problem and writes nothing', async (cron, message) => {
      const before = await count('schedules');
      const res = await post({ cron, timezone: 'UTC' });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.errors).toEqual([
        expect.objectContaining({ field: 'cron', message: expect.stringMatching(message) }),
      ]);
      expect(await count('schedules')).toBe(before);
    });
  });

  describe('labels', () => {
    it('are kept and filter GET /schedules?label=k:v (every label given must match)', async () => {
      const billing = await post({
        cron: '0 9 * * *',
        timezone: 'UTC',
        labels: { team: 'billing', tier: 'gold' },
      });
      const billingSilver = await post({
        cron: '0 9 * * *',
        timezone: 'UTC',
        labels: { team: 'billing', tier: 'silver' },
      });
      await post({ cron: '0 9 * * *', timezone: 'UTC', labels: { team: 'search' } });
      const foreign = await post(
        { cron: '0 9 * * *', timezone: 'UTC', labels: { team: 'billing' } },
        other,
      );
      expect(foreign.status).toBe(201);
      expect(billing.body.labels).toEqual({ team: 'billing', tier: 'gold' });

      const team = await auth(t.http.get('/schedules?label=team:billing'));
      expect(team.status).toBe(200);
      expect(team.body.items.map((s: { id: string }) => s.id).sort()).toEqual(
        [billing.body.id, billingSilver.body.id].sort(),
      );
      const both = await auth(t.http.get('/schedules?label=team:billing&label=tier:gold'));
      expect(both.body.items.map((s: { id: string }) => s.id)).toEqual([billing.body.id]);
      const none = await auth(t.http.get('/schedules?label=team:nobody'));
      expect(none.body.items).toEqual([]);
    });

    it.each<[string, object, string]>([
      ['a key with a space', { 'bad key': 'x' }, 'labels.bad key'],
      ['a value that is not a string', { team: 5 }, 'labels.team'],
      ['a value too long', { team: 'x'.repeat(129) }, 'labels.team'],
      [
        'too many labels',
        Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`k${i}`, 'v'])),
        'labels',
      ],
    ])('refuses %s (400, nothing written)', async (_name, labels, field) => {
      const before = await count('schedules');
      const res = await post({ cron: '0 9 * * *', timezone: 'UTC', labels });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await count('schedules')).toBe(before);
    });

    it('refuses a malformed label filter', async () => {
      const res = await auth(t.http.get('/schedules?label=nocolon'));
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    });
  });

  describe('interval schedules', () => {
    it('run every interval from the anchor, shown in local time across a DST change', async () => {
      const res = await preview({
        every: '90m',
        anchorAt: '2027-03-14T05:00:00Z',
        timezone: 'America/New_York',
        from: '2027-03-14T00:00:00Z',
        count: 3,
      });
      expect(res.status).toBe(200);
      expect(ats(res)).toEqual([
        '2027-03-14T05:00:00.000Z 2027-03-14T00:00:00-05:00',
        '2027-03-14T06:30:00.000Z 2027-03-14T01:30:00-05:00',
        '2027-03-14T08:00:00.000Z 2027-03-14T04:00:00-04:00',
      ]);
      const anchorAt = new Date(Date.now() + 3600_000).toISOString();
      const created = await post({ every: '90m', anchorAt, timezone: 'America/New_York' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        every: '1h30m',
        everySeconds: 5400,
        anchorAt,
        cron: null,
        runAt: null,
        nextDueAt: anchorAt,
      });
      const own = await auth(t.http.get(`/schedules/${created.body.id}/preview?count=2`));
      expect(own.body.items.map((i: { at: string }) => i.at)).toEqual([
        anchorAt,
        new Date(Date.parse(anchorAt) + 5400_000).toISOString(),
      ]);
    });

    it('an edit can turn a cron schedule into an interval one', async () => {
      const created = await post({ cron: '0 9 * * *', timezone: 'Europe/Berlin' });
      const edited = await auth(t.http.patch(`/schedules/${created.body.id}`))
        .set('If-Match', '"1"')
        .send({ cron: null, every: '2h' });
      expect(edited.status).toBe(200);
      expect(edited.body).toMatchObject({
        cron: null,
        dstPolicy: null,
        every: '2h',
        timezone: 'Europe/Berlin',
        revision: 2,
      });
    });

    it.each<[string, object, string]>([
      ['a malformed duration', { every: '90 minutes' }, 'every'],
      ['a zero duration', { every: '0m' }, 'every'],
      ['an interval longer than 366 days', { every: '367d' }, 'every'],
      ['every with cron', { every: '1h', cron: '0 9 * * *', timezone: 'UTC' }, 'runAt'],
      ['every with a dstPolicy', { every: '1h', dstPolicy: { nonexistent: 'skip' } }, 'dstPolicy'],
      [
        'anchorAt with cron',
        { cron: '0 9 * * *', timezone: 'UTC', anchorAt: '2027-01-01T00:00:00Z' },
        'anchorAt',
      ],
      [
        'an anchor more than the horizon ahead',
        { every: '1h', anchorAt: '2099-01-01T00:00:00Z' },
        'every',
      ],
    ])('refuses %s (400, nothing written)', async (_name, body, field) => {
      const before = await count('schedules');
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await count('schedules')).toBe(before);
    });
  });

  describe('excluded dates and calendars', () => {
    it('drop the runs on the listed local dates, in preview and in nextDueAt', async () => {
      const body = {
        cron: '0 9 * * *',
        timezone: 'Europe/Berlin',
        from: '2027-12-23T12:00:00Z',
        count: 3,
      };
      const res = await preview({
        ...body,
        excludeDates: ['2027-12-24', '2027-12-25', '2027-12-26'],
      });
      expect(ats(res)).toEqual([
        '2027-12-27T08:00:00.000Z 2027-12-27T09:00:00+01:00',
        '2027-12-28T08:00:00.000Z 2027-12-28T09:00:00+01:00',
        '2027-12-29T08:00:00.000Z 2027-12-29T09:00:00+01:00',
      ]);
      const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
      const today = new Date().toISOString().slice(0, 10);
      const created = await post({
        cron: '0 12 * * *',
        timezone: 'UTC',
        excludeDates: [tomorrow, today],
      });
      expect(created.status).toBe(201);
      expect(created.body.excludeDates).toEqual([today, tomorrow].sort());
      expect(created.body.nextDueAt.slice(0, 10) > tomorrow).toBe(true);
    });

    it('a named calendar of the tenant excludes its dates; another tenant cannot use it', async () => {
      const calendar = await auth(t.http.post('/calendars')).send({
        name: 'holidays',
        dates: ['2027-12-26', '2027-12-25', '2027-12-25'],
      });
      expect(calendar.status).toBe(201);
      expect(calendar.body.dates).toEqual(['2027-12-25', '2027-12-26']);
      const res = await preview({
        cron: '0 9 * * *',
        timezone: 'UTC',
        calendarId: calendar.body.id,
        from: '2027-12-24T12:00:00Z',
        count: 1,
      });
      expect(ats(res)).toEqual(['2027-12-27T09:00:00.000Z 2027-12-27T09:00:00+00:00']);
      const created = await post({
        cron: '0 9 * * *',
        timezone: 'UTC',
        calendarId: calendar.body.id,
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ calendarId: calendar.body.id, excludeDates: [] });
      expect((await auth(t.http.get(`/calendars/${calendar.body.id}`))).body.name).toBe('holidays');
      const listed = await auth(t.http.get('/calendars'));
      expect(listed.body.items.map((c: { id: string }) => c.id)).toContain(calendar.body.id);

      const before = await count('schedules');
      const foreign = await post(
        { cron: '0 9 * * *', timezone: 'UTC', calendarId: calendar.body.id },
        other,
      );
      expect(foreign.status).toBe(404);
      expect(
        (await auth(t.http.get(`/calendars/${calendar.body.id}`), other.tenant.apiKey)).status,
      ).toBe(404);
      expect(await count('schedules')).toBe(before);
    });

    it.each<[string, object, string]>([
      ['a date that does not exist', { excludeDates: ['2027-02-30'] }, 'excludeDates'],
      ['a date in another format', { excludeDates: ['25.12.2027'] }, 'excludeDates'],
      [
        'both a list and a calendar',
        { excludeDates: ['2027-12-25'], calendarId: randomUUID() },
        'excludeDates',
      ],
      [
        'excluded dates on a one-time schedule',
        {
          cron: undefined,
          timezone: undefined,
          runAt: new Date(Date.now() + 3600_000).toISOString(),
          excludeDates: ['2027-12-25'],
        },
        'excludeDates',
      ],
    ])('refuses %s (400, nothing written)', async (_name, body, field) => {
      const before = await count('schedules');
      const res = await post({ cron: '0 9 * * *', timezone: 'UTC', ...body });
      expect(res.status).toBe(400);
      expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
      expect(await count('schedules')).toBe(before);
    });

    it('an unknown calendar is a 404 and writes nothing', async () => {
      const before = await count('schedules');
      const res = await post({ cron: '0 9 * * *', timezone: 'UTC', calendarId: randomUUID() });
      expect(res.status).toBe(404);
      expect(await count('schedules')).toBe(before);
    });

    it('refuses a bad calendar (400) and a second calendar of the same name (409)', async () => {
      const bad = await auth(t.http.post('/calendars')).send({
        name: 'bad',
        dates: ['2027-13-01'],
      });
      expect(bad.status).toBe(400);
      expect(await count("calendars WHERE name = 'bad'")).toBe(0);
      const first = await auth(t.http.post('/calendars')).send({ name: 'twice', dates: [] });
      expect(first.status).toBe(201);
      const second = await auth(t.http.post('/calendars')).send({
        name: 'twice',
        dates: ['2027-01-01'],
      });
      expect(second.status).toBe(409);
    });
  });

  describe('maxRuns', () => {
    it('completes the schedule after N runs, and preview shows only what is left', async () => {
      const anchorAt = new Date(Date.now() + 1000).toISOString();
      const created = await post({ every: '1s', anchorAt, maxRuns: 2, overlapPolicy: 'allow' });
      expect(created.status).toBe(201);
      const own = await auth(t.http.get(`/schedules/${created.body.id}/preview?count=10`));
      expect(own.body.items).toHaveLength(2);
      await eventually(
        async () => {
          const [row] = await db.query('SELECT status, run_count FROM schedules WHERE id = $1', [
            created.body.id,
          ]);
          expect(row).toEqual({ status: 'completed', run_count: 2 });
        },
        { timeoutMs: 15_000 },
      );
      const runs = await db.query(`SELECT state FROM occurrences WHERE schedule_id = $1`, [
        created.body.id,
      ]);
      expect(runs).toHaveLength(2);
      expect(
        await db.query('SELECT 1 FROM due_index WHERE schedule_id = $1', [created.body.id]),
      ).toEqual([]);
      const read = await auth(t.http.get(`/schedules/${created.body.id}`));
      expect(read.body).toMatchObject({
        status: 'completed',
        maxRuns: 2,
        runCount: 2,
        nextDueAt: null,
      });
    });

    it.each<[string, object]>([
      ['maxRuns 0', { cron: '0 9 * * *', timezone: 'UTC', maxRuns: 0 }],
      [
        'maxRuns on a one-time schedule',
        { runAt: new Date(Date.now() + 3600_000).toISOString(), maxRuns: 3 },
      ],
    ])('refuses %s (400, nothing written)', async (_name, body) => {
      const before = await count('schedules');
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await count('schedules')).toBe(before);
    });
  });
});
