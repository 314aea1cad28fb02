import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { DataSource } from 'typeorm';
import { NotFoundError } from '../../src/common';
import { checkTargetUrl, parseAllowedHosts } from '../../src/delivery/address-policy';
import { TargetsService } from '../../src/targets';
import { startTestApp, TestApp } from '../support/test-app';

const ALLOWED_HOSTS = 'billing.internal,10.1.2.3';
const SECRET = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
const PROBLEM_JSON = /^application\/problem\+json/;

type Tenant = { id: string; apiKey: string };

describe('targets API', () => {
  let t: TestApp;
  let acme: Tenant;

  const db = () => t.app.get(DataSource);
  const as = (req: Test, tenant: Tenant = acme) =>
    req.set('Authorization', `Bearer ${tenant.apiKey}`);
  // The management API is rate limited per tenant, so request-heavy tests get their own tenant.
  const freshTenant = () => t.createTenant(`tenant-${randomUUID()}`);
  const countTargets = async (): Promise<number> =>
    (await db().query('SELECT count(*)::int AS n FROM targets'))[0].n;
  const storedRow = async (id: string): Promise<Record<string, unknown>> =>
    (await db().query('SELECT to_jsonb(t) AS row FROM targets t WHERE id = $1', [id]))[0].row;
  const valid = (overrides: Record<string, unknown> = {}) => ({
    name: `target-${randomUUID()}`,
    url: 'https://example.com/hook',
    ...overrides,
  });
  async function create(body: object = valid(), tenant: Tenant = acme) {
    const res = await as(t.http.post('/targets'), tenant).send(body);
    expect(res.status).toBe(201);
    return res.body;
  }
  const policyReason = (url: string): string => {
    const check = checkTargetUrl(url, parseAllowedHosts(ALLOWED_HOSTS));
    if (check.ok) throw new Error(`${url} is allowed by the policy`);
    return check.reason;
  };

  beforeAll(async () => {
    t = await startTestApp({ TARGET_ALLOWED_HOSTS: ALLOWED_HOSTS });
    acme = await freshTenant();
  });
  afterAll(() => t.close());

  describe('create and read', () => {
    it('registers a target with defaults and reads it back', async () => {
      const res = await as(t.http.post('/targets')).send({
        name: 'billing',
        url: 'https://billing.example.com/hooks/nightly',
      });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        name: 'billing',
        kind: 'http',
        url: 'https://billing.example.com/hooks/nightly',
        method: 'POST',
        headers: {},
        timeoutMs: 10000,
        deduplicates: false,
        hasSigningSecret: false,
        previousSecretExpiresAt: null,
        maxConcurrency: null,
        ratePerSecond: null,
        status: 'active',
        disabledReason: null,
        backoffUntil: null,
        auth: null,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const read = await as(t.http.get(`/targets/${res.body.id}`));
      expect(read.status).toBe(200);
      expect(read.body).toEqual(res.body);
    });

    it('stores every field given and the URL in normalised form', async () => {
      const body = await create(
        valid({
          kind: 'http',
          url: 'HTTPS://Example.COM/a b?x=1',
          method: 'PUT',
          headers: { 'X-Team': 'billing', 'User-Agent': 'acme-scheduler/1.0' },
          timeoutMs: 60000,
          deduplicates: true,
        }),
      );
      expect(body).toMatchObject({
        url: 'https://example.com/a%20b?x=1',
        method: 'PUT',
        headers: { 'X-Team': 'billing', 'User-Agent': 'acme-scheduler/1.0' },
        timeoutMs: 60000,
        deduplicates: true,
      });
    });

    it('accepts internal hosts that TARGET_ALLOWED_HOSTS lists', async () => {
      await create(valid({ url: 'http://billing.internal/hook' }));
      await create(valid({ url: 'http://10.1.2.3:8080/hook' }));
    });

    it('answers a duplicate name with 409 and writes nothing, also when two race', async () => {
      const tenant = await freshTenant();
      const first = await create(valid({ name: 'dup' }), tenant);
      const before = await countTargets();
      const again = await as(t.http.post('/targets'), tenant).send(valid({ name: 'dup' }));
      expect(again.status).toBe(409);
      expect(again.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(await countTargets()).toBe(before);

      const renamed = await create(valid({ name: 'other' }), tenant);
      const rename = await as(t.http.patch(`/targets/${renamed.id}`), tenant).send({ name: 'dup' });
      expect(rename.status).toBe(409);
      expect((await as(t.http.get(`/targets/${renamed.id}`), tenant)).body.name).toBe('other');

      const raced = await Promise.all(
        [1, 2].map(() => as(t.http.post('/targets'), tenant).send(valid({ name: 'race' }))),
      );
      expect(raced.map((r) => r.status).sort()).toEqual([201, 409]);

      // Names are per tenant.
      await create(valid({ name: 'dup' }), await freshTenant());
      expect(first.name).toBe('dup');
    });
  });

  describe('bad input answers 400 problem+json and writes nothing', () => {
    const refusedUrls = [
      'http://127.0.0.1/hook',
      'http://[::1]/hook',
      'http://2130706433/hook',
      'http://localhost:8080/hook',
      'http://10.0.0.5/hook',
      'http://10.1.2.4/hook',
      'http://192.168.1.10/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://other.internal/hook',
      'ftp://example.com/file',
      'javascript:alert(1)',
      'https://user:password@example.com/hook',
      'https://token@example.com/hook',
      'not a url',
      '/relative/path',
    ];

    it.each(refusedUrls)('refuses url %s with the address policy reason', async (url) => {
      const tenant = await freshTenant();
      const before = await countTargets();
      const res = await as(t.http.post('/targets'), tenant).send(valid({ url }));
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body.detail).toBe(policyReason(url));
      expect(res.body.errors).toEqual([{ field: 'url', message: policyReason(url) }]);
      expect(await countTargets()).toBe(before);
    });

    const tooManyHeaders = Object.fromEntries(
      Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']),
    );
    const badBodies: [string, Record<string, unknown>, string][] = [
      ['a URL with a newline', { url: 'https://exa\nmple.com/hook' }, 'url'],
      ['a URL that is too long', { url: `https://example.com/${'a'.repeat(2040)}` }, 'url'],
      ['a URL of the wrong type', { url: 42 }, 'url'],
      ['no URL', { url: undefined }, 'url'],
      ['21 headers', { headers: tooManyHeaders }, 'headers'],
      ['a Host header', { headers: { Host: 'evil.example' } }, 'headers'],
      ['an Authorization header', { headers: { authorization: 'Bearer abc' } }, 'headers'],
      ['a Cookie header', { headers: { Cookie: 'session=abc' } }, 'headers'],
      ['a Proxy-Authorization header', { headers: { 'Proxy-Authorization': 'x' } }, 'headers'],
      ['a Content-Length header', { headers: { 'Content-Length': '5' } }, 'headers'],
      ['a Transfer-Encoding header', { headers: { 'Transfer-Encoding': 'chunked' } }, 'headers'],
      ['a Connection header', { headers: { Connection: 'close' } }, 'headers'],
      ['an Idempotency-Key header', { headers: { 'Idempotency-Key': 'k' } }, 'headers'],
      ['an X-Dueline-* header', { headers: { 'X-Dueline-Run-Id': 'forged' } }, 'headers'],
      ['a header name that is not a token', { headers: { 'X Team': 'a' } }, 'headers'],
      ['a header value with CRLF', { headers: { 'X-A': 'a\r\nInjected: 1' } }, 'headers'],
      ['a header value with NUL', { headers: { 'X-A': 'a\u0000b' } }, 'headers'],
      ['a non-ASCII header value', { headers: { 'X-A': 'café' } }, 'headers'],
      ['a header value too long', { headers: { 'X-A': 'a'.repeat(1025) } }, 'headers'],
      ['a non-string header value', { headers: { 'X-A': 5 } }, 'headers'],
      ['a header given twice', { headers: { 'X-A': '1', 'x-a': '2' } }, 'headers'],
      ['headers as an array', { headers: ['X-A: 1'] }, 'headers'],
      ['headers as a string', { headers: 'X-A: 1' }, 'headers'],
      ['null headers', { headers: null }, 'headers'],
      ['an empty name', { name: '' }, 'name'],
      ['a name with a newline', { name: 'bad\nname' }, 'name'],
      ['a name with an escape', { name: 'bad\u001bname' }, 'name'],
      ['a name too long', { name: 'x'.repeat(201) }, 'name'],
      ['a name of the wrong type', { name: 42 }, 'name'],
      ['no name', { name: undefined }, 'name'],
      ['an unknown kind', { kind: 'grpc' }, 'kind'],
      ['a lower-case method', { method: 'post' }, 'method'],
      ['an unsupported method', { method: 'OPTIONS' }, 'method'],
      ['a timeout below 1000', { timeoutMs: 999 }, 'timeoutMs'],
      ['a timeout above 60000', { timeoutMs: 60001 }, 'timeoutMs'],
      ['a fractional timeout', { timeoutMs: 1500.5 }, 'timeoutMs'],
      ['a timeout as a string', { timeoutMs: '5000' }, 'timeoutMs'],
      ['deduplicates as a string', { deduplicates: 'yes' }, 'deduplicates'],
      ['a secret too short', { signingSecret: 'short-secret' }, 'signingSecret'],
      ['a secret too long', { signingSecret: 's'.repeat(257) }, 'signingSecret'],
      [
        'a secret not in the whsec_ form',
        { signingSecret: 'plain-text-secret-0123456789' },
        'signingSecret',
      ],
      [
        'a whsec_ secret of too few bytes',
        { signingSecret: `whsec_${Buffer.alloc(16).toString('base64')}` },
        'signingSecret',
      ],
      ['a secret with a newline', { signingSecret: 'abcdefgh\nijklmnopq' }, 'signingSecret'],
      ['a secret of the wrong type', { signingSecret: 1234567890123456 }, 'signingSecret'],
      ['an unknown field', { bogus: true }, 'bogus'],
      ['a read-only field', { hasSigningSecret: true }, 'hasSigningSecret'],
      ['a client-chosen id', { id: randomUUID() }, 'id'],
    ];

    it.each(badBodies)('refuses %s', async (_label, overrides, field) => {
      const tenant = await freshTenant();
      const before = await countTargets();
      const res = await as(t.http.post('/targets'), tenant).send(valid(overrides));
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(res.text).not.toContain('short-secret');
      expect(await countTargets()).toBe(before);
    });

    it('names the reserved header and points credentials at signingSecret', async () => {
      const res = await as(t.http.post('/targets')).send(
        valid({ headers: { Authorization: 'Bearer abc' } }),
      );
      expect(res.status).toBe(400);
      expect(res.body.errors[0].message).toMatch(/Authorization.*signingSecret/);
      expect(res.text).not.toContain('Bearer abc');
    });

    it('refuses a body that is not an object, and malformed JSON', async () => {
      const before = await countTargets();
      expect((await as(t.http.post('/targets')).send([valid()])).status).toBe(400);
      const malformed = await as(t.http.post('/targets'))
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expect(malformed.status).toBe(400);
      expect(malformed.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(await countTargets()).toBe(before);
    });

    it.each(badBodies.filter(([, overrides]) => !Object.values(overrides).includes(undefined)))(
      'refuses %s on PATCH and leaves the target as it was',
      async (_label, overrides) => {
        const tenant = await freshTenant();
        const target = await create(valid({ signingSecret: SECRET }), tenant);
        const before = await storedRow(target.id);
        const res = await as(t.http.patch(`/targets/${target.id}`), tenant).send(overrides);
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        expect(await storedRow(target.id)).toEqual(before);
      },
    );

    it.each([
      ['a refused URL', { url: 'http://127.0.0.1/' }],
      ['a null name', { name: null }],
      ['a null url', { url: null }],
      ['a null timeout', { timeoutMs: null }],
      ['a null method', { method: null }],
    ])('refuses %s on PATCH', async (_label, body) => {
      const target = await create();
      const before = await storedRow(target.id);
      const res = await as(t.http.patch(`/targets/${target.id}`)).send(body);
      expect(res.status).toBe(400);
      expect(await storedRow(target.id)).toEqual(before);
    });
  });

  describe('list', () => {
    async function walk(tenant: Tenant, limit: number) {
      const pages: { id: string; createdAt: string }[][] = [];
      let cursor: string | null = null;
      do {
        const query: Record<string, string | number> = { limit };
        if (cursor) query.cursor = cursor;
        const res = await as(t.http.get('/targets'), tenant).query(query);
        expect(res.status).toBe(200);
        expect(res.body.items.length).toBeLessThanOrEqual(limit);
        pages.push(res.body.items);
        cursor = res.body.nextCursor;
        if (pages.length > 100) throw new Error('cursor walk does not end');
      } while (cursor !== null);
      return pages;
    }

    it('walks more items than one page, visiting each exactly once in order', async () => {
      const tenant = await freshTenant();
      const created: string[] = [];
      for (let i = 0; i < 7; i++) created.push((await create(valid(), tenant)).id);
      const pages = await walk(tenant, 3);
      expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
      expect(pages.flat().map((item) => item.id)).toEqual(created);
    });

    it('keeps its place among rows created in the same microsecond or a microsecond apart', async () => {
      const tenant = await freshTenant();
      await db().query(
        `INSERT INTO targets (tenant_id, name, url, created_at)
         SELECT $1, 'bulk-' || g, 'https://example.com/', '2030-01-01T00:00:00Z'::timestamptz
                + (g / 3) * interval '1 microsecond'
           FROM generate_series(1, 12) g`,
        [tenant.id],
      );
      const expected: { id: string }[] = await db().query(
        'SELECT id FROM targets WHERE tenant_id = $1 ORDER BY created_at, id',
        [tenant.id],
      );
      for (const limit of [1, 2, 5]) {
        const ids = (await walk(tenant, limit)).flat().map((item) => item.id);
        expect(ids).toEqual(expected.map((row) => row.id));
      }
    });

    it('answers 50 items by default', async () => {
      const tenant = await freshTenant();
      await db().query(
        `INSERT INTO targets (tenant_id, name, url)
         SELECT $1, 'bulk-' || g, 'https://example.com/' FROM generate_series(1, 51) g`,
        [tenant.id],
      );
      const first = await as(t.http.get('/targets'), tenant);
      expect(first.body.items).toHaveLength(50);
      expect(first.body.nextCursor).toEqual(expect.any(String));
      const rest = await as(t.http.get('/targets'), tenant).query({
        cursor: first.body.nextCursor,
      });
      expect(rest.body.items).toHaveLength(1);
      expect(rest.body.nextCursor).toBeNull();
    });

    it('answers an empty list for a tenant without targets', async () => {
      const res = await as(t.http.get('/targets'), await freshTenant());
      expect(res.body).toEqual({ items: [], nextCursor: null });
    });

    it.each([
      ['limit=0', { limit: '0' }],
      ['limit=101', { limit: '101' }],
      ['limit=abc', { limit: 'abc' }],
      ['limit=1.5', { limit: '1.5' }],
      ['a cursor that is not base64url', { cursor: 'not a cursor!' }],
      ['a cursor of garbage', { cursor: Buffer.from('garbage').toString('base64url') }],
      [
        'a cursor with an impossible date',
        {
          cursor: Buffer.from(`2030-02-30T00:00:00.000000Z|${randomUUID()}`).toString('base64url'),
        },
      ],
      ['an unknown parameter', { status: 'active' }],
    ])('answers %s with 400', async (_label, query) => {
      const res = await as(t.http.get('/targets')).query(query);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
    });
  });

  describe('update', () => {
    it('changes only the fields given and bumps updatedAt', async () => {
      const target = await create(valid({ headers: { 'X-A': '1' } }));
      const res = await as(t.http.patch(`/targets/${target.id}`)).send({
        method: 'GET',
        timeoutMs: 5000,
        deduplicates: true,
      });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        ...target,
        method: 'GET',
        timeoutMs: 5000,
        deduplicates: true,
        updatedAt: expect.any(String),
      });
      expect(Date.parse(res.body.updatedAt)).toBeGreaterThan(Date.parse(target.updatedAt));

      const headers = await as(t.http.patch(`/targets/${target.id}`)).send({ headers: {} });
      expect(headers.body.headers).toEqual({});
      const url = await as(t.http.patch(`/targets/${target.id}`)).send({
        url: 'http://billing.internal/v2',
      });
      expect(url.body.url).toBe('http://billing.internal/v2');
      const empty = await as(t.http.patch(`/targets/${target.id}`)).send({});
      expect(empty.status).toBe(200);
      expect(empty.body).toEqual(url.body);
    });

    it('sets, rotates and clears the secret, which no response ever shows', async () => {
      const tenant = await freshTenant();
      const texts: string[] = [];
      const send = async (req: Test) => {
        const res = await as(req, tenant);
        texts.push(res.text);
        return res;
      };
      const created = await send(t.http.post('/targets').send(valid({ signingSecret: SECRET })));
      expect(created.status).toBe(201);
      expect(created.body.hasSigningSecret).toBe(true);
      expect(created.body).not.toHaveProperty('signingSecret');
      const id = created.body.id;
      const service = t.app.get(TargetsService);
      // What the worker signs with: the secrets its read of the target opens.
      const secretsOf = async () =>
        (await service.getForDispatch([{ tenantId: tenant.id, targetId: id }])).of(tenant.id, id)
          ?.signingSecrets;
      expect(await secretsOf()).toEqual([SECRET]);

      expect((await send(t.http.get(`/targets/${id}`))).body.hasSigningSecret).toBe(true);
      expect((await send(t.http.get('/targets'))).body.items[0].hasSigningSecret).toBe(true);
      const renamed = await send(t.http.patch(`/targets/${id}`).send({ name: 'renamed' }));
      expect(renamed.body.hasSigningSecret).toBe(true);

      const cleared = await send(t.http.patch(`/targets/${id}`).send({ signingSecret: null }));
      expect(cleared.status).toBe(200);
      expect(cleared.body.hasSigningSecret).toBe(false);
      expect(await secretsOf()).toEqual([]);
      expect((await send(t.http.get(`/targets/${id}`))).body.hasSigningSecret).toBe(false);

      const rotated = await send(
        t.http.patch(`/targets/${id}`).send({ signingSecret: OTHER_SECRET }),
      );
      expect(rotated.body.hasSigningSecret).toBe(true);
      expect(await secretsOf()).toEqual([OTHER_SECRET]);

      // Error answers to requests that carry a secret do not echo it either.
      await create(valid({ name: 'taken' }), tenant);
      const conflict = await send(
        t.http.post('/targets').send(valid({ name: 'taken', signingSecret: SECRET })),
      );
      expect(conflict.status).toBe(409);
      const invalid = await send(
        t.http.patch(`/targets/${id}`).send({ signingSecret: SECRET, url: 'http://127.0.0.1/' }),
      );
      expect(invalid.status).toBe(400);

      for (const text of texts) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain(OTHER_SECRET);
        expect(text).not.toContain('"signingSecret":');
      }
    });
  });

  describe('delete', () => {
    it('soft-deletes: the target disappears for every route and frees its name', async () => {
      const tenant = await freshTenant();
      const target = await create(valid({ name: 'short-lived' }), tenant);
      const res = await as(t.http.delete(`/targets/${target.id}`), tenant);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');

      for (const req of [
        t.http.get(`/targets/${target.id}`),
        t.http.patch(`/targets/${target.id}`).send({ timeoutMs: 2000 }),
        t.http.delete(`/targets/${target.id}`),
      ]) {
        const gone = await as(req, tenant);
        expect(gone.status).toBe(404);
        expect(gone.headers['content-type']).toMatch(PROBLEM_JSON);
      }
      expect((await as(t.http.get('/targets'), tenant)).body.items).toEqual([]);
      const [row] = await db().query('SELECT deleted_at FROM targets WHERE id = $1', [target.id]);
      expect(row.deleted_at).toBeInstanceOf(Date);

      const service = t.app.get(TargetsService);
      expect(
        (await service.getForDispatch([{ tenantId: tenant.id, targetId: target.id }])).of(
          tenant.id,
          target.id,
        ),
      ).toBeNull();
      await expect(service.assertUsable(tenant.id, target.id)).rejects.toThrow(NotFoundError);

      const again = await create(valid({ name: 'short-lived' }), tenant);
      expect(again.id).not.toBe(target.id);
    });

    it('refuses with 409 while an active or paused schedule uses the target', async () => {
      const tenant = await freshTenant();
      const target = await create(valid(), tenant);
      const schedule = await as(t.http.post('/schedules'), tenant)
        .set('Idempotency-Key', randomUUID())
        .send({ name: 'uses-target', targetId: target.id, cron: '0 9 * * *', timezone: 'UTC' });
      expect(schedule.status).toBe(201);

      const active = await as(t.http.delete(`/targets/${target.id}`), tenant);
      expect(active.status).toBe(409);
      expect(active.headers['content-type']).toMatch(PROBLEM_JSON);
      expect(active.body.activeSchedules).toBe(1);

      const paused = await as(t.http.patch(`/schedules/${schedule.body.id}`), tenant)
        .set('If-Match', schedule.headers.etag)
        .send({ status: 'paused' });
      expect(paused.status).toBe(200);
      expect((await as(t.http.delete(`/targets/${target.id}`), tenant)).status).toBe(409);
      expect((await as(t.http.get(`/targets/${target.id}`), tenant)).status).toBe(200);

      const cancelled = await as(t.http.delete(`/schedules/${schedule.body.id}`), tenant);
      expect(cancelled.status).toBe(200);
      expect((await as(t.http.delete(`/targets/${target.id}`), tenant)).status).toBe(204);
    });
  });

  describe('tenant isolation', () => {
    it("answers 404 on every route for another tenant's target and changes nothing", async () => {
      const owner = await freshTenant();
      const intruder = await freshTenant();
      const target = await create(valid({ signingSecret: SECRET }), owner);
      const before = await storedRow(target.id);
      const unknown = await as(t.http.get(`/targets/${randomUUID()}`), intruder);

      for (const req of [
        t.http.get(`/targets/${target.id}`),
        t.http.patch(`/targets/${target.id}`).send({ name: 'hijacked' }),
        t.http.delete(`/targets/${target.id}`),
      ]) {
        const res = await as(req, intruder);
        expect(res.status).toBe(404);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
        // Indistinguishable from an id that exists nowhere.
        expect({ ...res.body, detail: undefined }).toEqual({ ...unknown.body, detail: undefined });
        expect(res.text).not.toContain(SECRET);
      }
      expect((await as(t.http.get('/targets'), intruder)).body.items).toEqual([]);
      expect(await storedRow(target.id)).toEqual(before);

      const service = t.app.get(TargetsService);
      await expect(service.assertUsable(intruder.id, target.id)).rejects.toThrow(NotFoundError);
      const dispatch = (tenantId: string) =>
        service.getForDispatch([{ tenantId, targetId: target.id }]);
      expect((await dispatch(intruder.id)).of(intruder.id, target.id)).toBeNull();
      expect((await dispatch(owner.id)).of(owner.id, target.id)).not.toBeNull();
      await expect(service.assertUsable(owner.id, target.id)).resolves.toBeUndefined();
    });

    it("reads a batch's targets of several tenants at once, each only for its own tenant", async () => {
      const first = await freshTenant();
      const second = await freshTenant();
      const a = await create(valid({ signingSecret: SECRET }), first);
      const b = await create(valid(), second);
      const targets = await t.app.get(TargetsService).getForDispatch([
        { tenantId: first.id, targetId: a.id },
        { tenantId: second.id, targetId: b.id },
        // A run naming another tenant's target (or one that exists nowhere) finds nothing.
        { tenantId: second.id, targetId: a.id },
        { tenantId: first.id, targetId: randomUUID() },
        { tenantId: first.id, targetId: 'not-a-uuid' },
      ]);
      expect(targets.of(first.id, a.id)).toMatchObject({ id: a.id, signingSecrets: [SECRET] });
      expect(targets.of(second.id, b.id)).toMatchObject({ id: b.id, signingSecrets: [] });
      expect(targets.of(second.id, a.id)).toBeNull();
      expect(targets.of(first.id, b.id)).toBeNull();
    });

    it.each(['not-a-uuid', '1', `${randomUUID()}x`, `{${randomUUID()}}`])(
      'answers a malformed id (%s) with 404 problem+json',
      async (id) => {
        for (const req of [
          t.http.get(`/targets/${encodeURIComponent(id)}`),
          t.http.patch(`/targets/${encodeURIComponent(id)}`).send({ timeoutMs: 2000 }),
          t.http.delete(`/targets/${encodeURIComponent(id)}`),
        ]) {
          const res = await as(req);
          expect(res.status).toBe(404);
          expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
          expect(res.body).toMatchObject({ status: 404, title: 'Not Found' });
        }
        await expect(t.app.get(TargetsService).assertUsable(acme.id, id)).rejects.toThrow(
          NotFoundError,
        );
      },
    );

    it.each([
      ['no key', undefined],
      ['a wrong key', 'Bearer dl_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      ['the admin token', 'Bearer test-admin-token-0123456789'],
    ])('answers every route with 401 for %s', async (_label, header) => {
      const id = randomUUID();
      const before = await countTargets();
      for (const req of [
        t.http.post('/targets').send(valid()),
        t.http.get('/targets'),
        t.http.get(`/targets/${id}`),
        t.http.patch(`/targets/${id}`).send({ name: 'x' }),
        t.http.delete(`/targets/${id}`),
      ]) {
        if (header) req.set('Authorization', header);
        const res = await req;
        expect(res.status).toBe(401);
        expect(res.headers['content-type']).toMatch(PROBLEM_JSON);
      }
      expect(await countTargets()).toBe(before);
    });
  });

  it('documents every route, with the secret write-only', async () => {
    const doc = (await t.http.get('/docs-json')).body;
    expect(Object.keys(doc.paths['/targets'])).toEqual(expect.arrayContaining(['post', 'get']));
    expect(Object.keys(doc.paths['/targets/{id}'])).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
    expect(doc.paths['/targets'].post.security).toEqual([{ bearer: [] }]);
    expect(doc.paths['/targets'].post.responses['409']).toBeDefined();
    expect(doc.paths['/targets/{id}'].get.responses['404']).toBeDefined();
    const schemas = doc.components.schemas;
    expect(schemas.CreateTargetDto.properties.signingSecret.writeOnly).toBe(true);
    expect(schemas.TargetDto.properties.signingSecret).toBeUndefined();
    expect(schemas.TargetDto.properties.hasSigningSecret).toBeDefined();
  });
});
