import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { DataSource } from 'typeorm';
import { startTestApp, TestApp } from '../support/test-app';

const SECRET_MARKER = 'Sup3rSecretValue-do-not-echo';
const GOOD_SECRET = `whsec_${Buffer.alloc(32, 77).toString('base64')}`;

/**
 * Bad auth blocks and secrets: a clear 400 problem naming the field, nothing written, and the
 * answer never repeats a secret it was given.
 */
describe('targets: bad secrets and auth blocks', () => {
  let t: TestApp;
  let tenant: { id: string; apiKey: string };
  const as = (req: Test) => req.set('Authorization', `Bearer ${tenant.apiKey}`);
  const tableText = async () =>
    JSON.stringify(await t.app.get(DataSource).query('SELECT to_jsonb(t) AS r FROM targets t'));

  beforeAll(async () => {
    t = await startTestApp({ TARGET_ALLOWED_HOSTS: 'auth.internal,127.0.0.1' });
    tenant = await t.createTenant('input');
  });
  afterAll(() => t.close());

  const oauth = (overrides: Record<string, unknown> = {}) => ({
    type: 'oauth2_client_credentials',
    tokenUrl: 'https://auth.example.com/token',
    clientId: 'client',
    clientSecret: SECRET_MARKER,
    ...overrides,
  });

  it.each([
    ['an auth block without a type', { token: SECRET_MARKER }, 'auth.type'],
    ['an unknown auth type', { type: 'kerberos', token: SECRET_MARKER }, 'auth.type'],
    ['bearer without its token', { type: 'bearer' }, 'auth.token'],
    [
      'a bearer token with a newline',
      { type: 'bearer', token: `a\n${SECRET_MARKER}` },
      'auth.token',
    ],
    ['basic without a password', { type: 'basic', username: 'u' }, 'auth.password'],
    [
      'a basic username with a colon',
      { type: 'basic', username: 'a:b', password: SECRET_MARKER },
      'auth.username',
    ],
    ['oauth without a client secret', oauth({ clientSecret: undefined }), 'auth.clientSecret'],
    ['oauth without a token URL', oauth({ tokenUrl: undefined }), 'auth.tokenUrl'],
    [
      'a token endpoint over http on a public host',
      oauth({ tokenUrl: 'http://auth.example.com/token' }),
      'auth.tokenUrl',
    ],
    [
      'a token endpoint on a private address',
      oauth({ tokenUrl: 'https://10.1.2.3/token' }),
      'auth.tokenUrl',
    ],
    ['a field another type has', { type: 'oidc', token: SECRET_MARKER }, 'auth.token'],
    ['auth that is not an object', 'bearer', 'auth'],
  ])('refuses %s with 400, writes nothing, echoes no secret', async (_label, auth, field) => {
    const before = await tableText();
    const res = await as(t.http.post('/targets')).send({
      name: `t-${randomUUID()}`,
      url: 'https://example.com/hook',
      auth,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const fields = (res.body.errors ?? []).map((e: { field: string }) => e.field);
    const messages = JSON.stringify(res.body.errors);
    expect(fields.includes(field) || messages.includes(field)).toBe(true);
    expect(res.text).not.toContain(SECRET_MARKER);
    expect(await tableText()).toBe(before);
  });

  it('allows an http token endpoint only on a host the operator listed', async () => {
    const res = await as(t.http.post('/targets')).send({
      name: `t-${randomUUID()}`,
      url: 'https://example.com/hook',
      auth: oauth({ tokenUrl: 'http://auth.internal/token' }),
    });
    expect(res.status).toBe(201);
    expect(res.text).not.toContain(SECRET_MARKER);
  });

  it('a bad PATCH leaves the target, its secret and its auth as they were', async () => {
    const created = await as(t.http.post('/targets')).send({
      name: `t-${randomUUID()}`,
      url: 'https://example.com/hook',
      signingSecret: GOOD_SECRET,
      auth: { type: 'bearer', token: SECRET_MARKER },
    });
    expect(created.status).toBe(201);
    expect(created.text).not.toContain(SECRET_MARKER);
    const before = await tableText();
    for (const body of [
      { auth: { type: 'basic', username: 'x' } },
      { signingSecret: 'not-in-the-whsec-form-000000' },
      { auth: oauth({ tokenUrl: 'ftp://auth.example.com/' }), name: 'renamed' },
    ]) {
      const res = await as(t.http.patch(`/targets/${created.body.id}`)).send(body);
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(SECRET_MARKER);
    }
    expect(await tableText()).toBe(before);
    const read = await as(t.http.get(`/targets/${created.body.id}`));
    expect(read.body).toMatchObject({ auth: { type: 'bearer' }, hasSigningSecret: true });
    expect(read.text).not.toContain(SECRET_MARKER);
  });
});
