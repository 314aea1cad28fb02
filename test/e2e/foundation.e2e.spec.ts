import { RUN_REASON_CODES } from '../../src/run-vocabulary';
import { TenantsService } from '../../src/tenants';
import { TenantsRepository } from '../../src/tenants/tenants.repository';
import { apiKeyParts } from '../support/api-keys';
import { TEST_ADMIN_TOKEN, startTestApp, TestApp } from '../support/test-app';

describe('foundation over HTTP', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const admin = (req: import('supertest').Test) =>
    req.set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`);

  describe('tenants (admin)', () => {
    it('creates a tenant with quotas and returns its API key once', async () => {
      const res = await admin(t.http.post('/tenants')).send({
        name: 'acme',
        quotas: { maxActiveSchedules: 5, dispatchRatePerSecond: 7, maxConcurrentRuns: 3 },
      });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        name: 'acme',
        quotas: { maxActiveSchedules: 5, dispatchRatePerSecond: 7, maxConcurrentRuns: 3 },
      });
      expect(res.body.apiKey).toMatch(/^dl_[a-f0-9]{16}_/);

      const read = await admin(t.http.get(`/tenants/${res.body.id}`));
      expect(read.status).toBe(200);
      expect(read.body.apiKey).toBeUndefined();
      expect(read.body.quotas.maxConcurrentRuns).toBe(3);
    });

    it('stores only a hash of the key', async () => {
      const { apiKey } = await t.createTenant('hashed');
      const { secret } = apiKeyParts(apiKey);
      const rows = await t.app
        .get(require('typeorm').DataSource)
        .query(
          `SELECT count(*)::int AS n FROM api_keys WHERE encode(secret_sha256, 'escape') LIKE $1`,
          [`%${secret}%`],
        );
      expect(rows[0].n).toBe(0);
    });

    it('patches quotas and 404s an unknown tenant', async () => {
      const { id } = await t.createTenant('patchy');
      const res = await admin(t.http.patch(`/tenants/${id}`)).send({
        quotas: { maxConcurrentRuns: 9 },
      });
      expect(res.status).toBe(200);
      expect(res.body.quotas.maxConcurrentRuns).toBe(9);
      expect(res.body.quotas.dispatchRatePerSecond).toBe(100);
      const missing = await admin(t.http.get('/tenants/00000000-0000-4000-8000-000000000000'));
      expect(missing.status).toBe(404);
      expect(missing.headers['content-type']).toMatch(/^application\/problem\+json/);
    });

    it('shares one key lookup among concurrent calls, and still checks each secret', async () => {
      const { apiKey } = await t.createTenant('busy');
      const { keyId, secret } = apiKeyParts(apiKey);
      const tenants = t.app.get(TenantsService);
      const lookups = jest.spyOn(t.app.get(TenantsRepository), 'findByActiveKey');
      try {
        const wrong = `dl_${keyId}_${secret.slice(0, -1)}${secret.endsWith('A') ? 'B' : 'A'}`;
        const calls = [...Array.from({ length: 10 }, () => apiKey), wrong].map((key) =>
          tenants.authenticate(key).then(
            (tenant) => tenant.name,
            (error: Error) => error.constructor.name,
          ),
        );
        expect(await Promise.all(calls)).toEqual([
          ...Array.from({ length: 10 }, () => 'busy'),
          'UnauthorizedError',
        ]);
        expect(lookups).toHaveBeenCalledTimes(1);
        // Settled lookups are not kept: the next call reads the key again.
        await tenants.authenticate(apiKey);
        expect(lookups).toHaveBeenCalledTimes(2);
      } finally {
        lookups.mockRestore();
      }
    });

    it('refuses null for a field that cannot be null', async () => {
      const { id } = await t.createTenant('nully');
      const res = await admin(t.http.patch(`/tenants/${id}`)).send({ name: null });
      expect(res.status).toBe(400);
      expect((await admin(t.http.get(`/tenants/${id}`))).body.name).toBe('nully');
    });

    it.each([
      ['no token', undefined],
      ['a wrong token', 'Bearer not-the-admin-token'],
      ['a tenant key', 'tenant'],
      ['a malformed header', 'Basic abc'],
    ])('refuses %s with 401', async (_label, header) => {
      let value = header;
      if (value === 'tenant') value = `Bearer ${(await t.createTenant('x')).apiKey}`;
      const req = t.http.post('/tenants').send({ name: 'nope' });
      if (value) req.set('Authorization', value);
      const res = await req;
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toMatchObject({ status: 401, title: 'Unauthorized' });
    });
  });

  describe('errors are problem+json', () => {
    it('rejects unknown fields with errors[]', async () => {
      const res = await admin(t.http.post('/tenants')).send({ name: 'a', bogus: true });
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        type: expect.any(String),
        title: expect.any(String),
        status: 400,
      });
      expect(res.body.errors).toEqual([
        { field: 'bogus', message: 'property bogus should not exist' },
      ]);
    });

    it('rejects unknown nested fields and wrong types', async () => {
      const res = await admin(t.http.post('/tenants')).send({
        name: 42,
        quotas: { maxConcurrentRuns: 'many', extra: 1 },
      });
      expect(res.status).toBe(400);
      const fields = res.body.errors.map((e: { field: string }) => e.field);
      expect(fields).toEqual(
        expect.arrayContaining(['name', 'quotas.maxConcurrentRuns', 'quotas.extra']),
      );
    });

    it('rejects control characters and oversized names', async () => {
      for (const name of ['bad\nname', 'x'.repeat(201), '']) {
        const res = await admin(t.http.post('/tenants')).send({ name });
        expect(res.status).toBe(400);
      }
    });

    it('answers malformed JSON with 400', async () => {
      const res = await admin(t.http.post('/tenants'))
        .set('Content-Type', 'application/json')
        .send('{"name": ');
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 400, detail: expect.stringMatching(/JSON/) });
    });

    it('answers a non-object body with 400', async () => {
      const res = await admin(t.http.post('/tenants')).send([{ name: 'a' }]);
      expect(res.status).toBe(400);
    });

    it('answers an oversized body with 413', async () => {
      const res = await admin(t.http.post('/tenants')).send({
        name: 'a',
        blob: 'x'.repeat(300 * 1024),
      });
      expect(res.status).toBe(413);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    });

    it('answers a malformed or foreign id with the same 404 problem on every route', async () => {
      const { apiKey } = await t.createTenant('ids');
      const other = await t.createTenant('other');
      const tenant = (req: ReturnType<typeof t.http.get>) =>
        req.set('Authorization', `Bearer ${apiKey}`);
      const ids = ['not-a-uuid', other.id, '00000000-0000-4000-8000-000000000000'];
      for (const id of ids) {
        const answers: Array<[string, Awaited<ReturnType<typeof tenant>>]> = [
          ['tenant', await admin(t.http.get(`/tenants/${id === other.id ? 'nope' : id}`))],
          ['target', await tenant(t.http.get(`/targets/${id}`))],
          ['target delete', await tenant(t.http.delete(`/targets/${id}`))],
          ['schedule', await tenant(t.http.get(`/schedules/${id}`))],
          ['schedule runs', await tenant(t.http.get(`/schedules/${id}/runs`))],
          ['trigger', await tenant(t.http.post(`/schedules/${id}/trigger`))],
          ['run', await tenant(t.http.get(`/runs/${id}`))],
          ['run cancel', await tenant(t.http.post(`/runs/${id}/cancel`))],
        ];
        for (const [route, res] of answers) {
          expect({ route, status: res.status, type: res.body.type }).toEqual({
            route,
            status: 404,
            type: expect.stringMatching(/not-found$/),
          });
          expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
        }
      }
    });

    it('answers an unknown route with 404', async () => {
      const res = await t.http.get('/no/such/route');
      expect(res.status).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 404, title: 'Not Found' });
    });
  });

  describe('operations', () => {
    it('serves liveness and readiness (database and queue)', async () => {
      expect((await t.http.get('/health/live')).status).toBe(200);
      const ready = await t.http.get('/health/ready');
      expect(ready.status).toBe(200);
      expect(ready.body.details).toMatchObject({
        database: { status: 'up' },
        queue: { status: 'up' },
      });
    });

    it('serves Prometheus metrics with process metrics and an HTTP latency histogram', async () => {
      await t.http.get('/health/live');
      const res = await t.http.get('/metrics');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain/);
      expect(res.text).toContain('dueline_process_cpu_user_seconds_total');
      // The database's own counts, read at scrape time: this app has talked to Postgres, and a
      // wait is taken by at most every round trip.
      const count = (name: string) =>
        Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(res.text)?.[1] ?? NaN);
      expect(count('dueline_db_round_trips_total')).toBeGreaterThan(0);
      expect(count('dueline_db_waits_total')).toBeGreaterThan(0);
      expect(count('dueline_db_waits_total')).toBeLessThanOrEqual(
        count('dueline_db_round_trips_total'),
      );
      expect(res.text).toMatch(
        /dueline_http_request_duration_seconds_bucket\{le="[^"]+",method="GET",route="\/health\/live",status="200"\}/,
      );
    });

    it('echoes a sane X-Request-Id and invents one otherwise', async () => {
      const given = await t.http.get('/health/live').set('X-Request-Id', 'abc-123');
      expect(given.headers['x-request-id']).toBe('abc-123');
      const invented = await t.http.get('/health/live').set('X-Request-Id', 'bad id with spaces');
      expect(invented.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    });

    it('publishes the OpenAPI document with the bearer scheme and problem shapes', async () => {
      const res = await t.http.get('/docs-json');
      expect(res.status).toBe(200);
      expect(res.body.components.securitySchemes).toMatchObject({
        bearer: { type: 'http', scheme: 'bearer' },
        admin: { type: 'http', scheme: 'bearer' },
      });
      expect(res.body.components.schemas.ProblemDto).toBeDefined();
      const post = res.body.paths['/tenants'].post;
      expect(post.requestBody.content['application/json'].schema.$ref).toContain('CreateTenantDto');
      expect(post.responses['400'].content['application/problem+json']).toBeDefined();
      // Run reasons are one documented vocabulary, wherever a reason is answered.
      const { schemas } = res.body.components;
      expect(schemas.RunDto.properties.reason.enum).toEqual(RUN_REASON_CODES);
      expect(schemas.CompleteResponseDto.properties.reason.enum).toEqual(RUN_REASON_CODES);
      expect(schemas.RunDto.properties.reason.description).toContain('waiting_for_previous');
      const ui = await t.http.get('/docs');
      expect(ui.status).toBe(200);
      expect(ui.text).toContain('swagger');
    });
  });
});
