import { createServer, IncomingMessage, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createLocalJWKSet, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from 'jose';
import { SigningKeysService } from '../../src/signing-keys';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';

const ISSUER = 'https://dueline.test';

/** A local OAuth token endpoint that hands out tok-1, tok-2, … and records each request. */
async function tokenEndpoint() {
  const requests: Array<{ authorization?: string; form: URLSearchParams }> = [];
  let issued = 0;
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      requests.push({ authorization: req.headers.authorization, form: new URLSearchParams(body) });
      issued++;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({ access_token: `tok-${issued}`, token_type: 'Bearer', expires_in: 3600 }),
      );
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/oauth/token`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** Authentication to targets: static credentials, OAuth client credentials, dueline's JWTs. */
describe('target authentication', () => {
  let w: ExecutionWorld;
  let tokens: Awaited<ReturnType<typeof tokenEndpoint>>;

  const createTarget = async (auth: object) => {
    const res = await w.auth(w.t.http.post('/targets')).send({
      name: `auth-${Math.random().toString(36).slice(2)}`,
      url: w.sink.url(),
      auth,
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const deliver = async (targetId: string, state = 'SUCCEEDED') => {
    const runId = await w.trigger(await w.createSchedule(targetId));
    const run = await eventually(async () => {
      const r = await w.run(runId);
      // The detail shows in the failure message when the state is not the expected one.
      expect(`${r.state}: ${r.reasonDetail}`).toMatch(new RegExp(`^${state}:`));
      return r;
    });
    return { run, requests: w.sink.forRun(runId) };
  };
  const tableText = async () =>
    JSON.stringify(await w.db.query('SELECT to_jsonb(t) AS row FROM targets t'));

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker,relay', {
      OIDC_ISSUER: ISSUER,
      OIDC_KEY_PUBLISH_AHEAD_SECONDS: '2',
    });
    tokens = await tokenEndpoint();
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(async () => {
    await w.close();
    await tokens.close();
  });

  it('bearer and basic: sent as Authorization, never shown or stored in the clear', async () => {
    const bearer = await createTarget({ type: 'bearer', token: 'static-bearer-token-42' });
    expect(bearer.auth).toEqual({ type: 'bearer' });
    const basic = await createTarget({
      type: 'basic',
      username: 'dueline',
      password: 'basic pass with spaces',
    });
    expect(basic.auth).toEqual({ type: 'basic', username: 'dueline' });

    const [b] = (await deliver(bearer.id)).requests;
    expect(b.headers.authorization).toBe('Bearer static-bearer-token-42');
    const [c] = (await deliver(basic.id)).requests;
    expect(c.headers.authorization).toBe(
      `Basic ${Buffer.from('dueline:basic pass with spaces').toString('base64')}`,
    );
    const text = await tableText();
    expect(text).not.toContain('static-bearer-token-42');
    expect(text).not.toContain('basic pass with spaces');
    const read = await w.auth(w.t.http.get(`/targets/${basic.id}`));
    expect(read.text).not.toContain('basic pass');
  });

  it('OAuth client credentials: one token for many calls, fetched again once on a 401', async () => {
    const target = await createTarget({
      type: 'oauth2_client_credentials',
      tokenUrl: tokens.url,
      clientId: 'client-a',
      clientSecret: 'client-secret-xyz',
      scope: 'jobs:run',
      audience: 'https://api.example.com',
    });
    expect(target.auth).toEqual({
      type: 'oauth2_client_credentials',
      tokenUrl: tokens.url,
      clientId: 'client-a',
      scope: 'jobs:run',
      audience: 'https://api.example.com',
    });
    const first = await deliver(target.id);
    const second = await deliver(target.id);
    expect(first.requests[0].headers.authorization).toBe('Bearer tok-1');
    expect(second.requests[0].headers.authorization).toBe('Bearer tok-1');
    expect(tokens.requests).toHaveLength(1);
    expect(tokens.requests[0].authorization).toBe(
      `Basic ${Buffer.from('client-a:client-secret-xyz').toString('base64')}`,
    );
    expect(Object.fromEntries(tokens.requests[0].form)).toEqual({
      grant_type: 'client_credentials',
      scope: 'jobs:run',
      audience: 'https://api.example.com',
    });

    // The target revokes tok-1: the worker fetches a new token once, in the same attempt.
    w.sink.behave((req) =>
      req.headers.authorization === 'Bearer tok-1' ? { status: 401 } : { status: 200 },
    );
    const third = await deliver(target.id);
    expect(third.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer tok-1',
      'Bearer tok-2',
    ]);
    expect(third.run.attemptCount).toBe(1);
    expect(tokens.requests).toHaveLength(2);

    // A target that refuses every token: one refresh, not a loop.
    w.sink.behave(() => ({ status: 401 }));
    const refused = await deliver(target.id, 'FAILED');
    expect(refused.requests).toHaveLength(2);
    expect(tokens.requests).toHaveLength(3);
    expect(await tableText()).not.toContain('client-secret-xyz');
  });

  it('oidc: a short-lived JWT for the target URL that jose verifies against the JWKS', async () => {
    const target = await createTarget({ type: 'oidc' });
    const { requests, run } = await deliver(target.id);
    const token = (requests[0].headers.authorization as string).replace(/^Bearer /, '');
    const jwks = (await w.t.http.get('/.well-known/jwks.json')).body as JSONWebKeySet;
    expect(jwks.keys.length).toBeGreaterThanOrEqual(1);
    for (const key of jwks.keys) expect(key).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), {
      issuer: ISSUER,
      audience: w.sink.url(),
    });
    expect(protectedHeader.alg).toBe('ES256');
    expect(payload).toMatchObject({ sub: w.tenant.id, run_id: run.id, target_id: target.id });
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
    await expect(
      jwtVerify(token, createLocalJWKSet(jwks), { issuer: ISSUER, audience: 'https://other' }),
    ).rejects.toThrow();
    // The private key is sealed at rest.
    const keys = JSON.stringify(await w.db.query('SELECT private_key FROM signing_keys'));
    expect(keys).not.toContain('PRIVATE KEY');
  });

  it('keys rotate without downtime: published before they sign, kept until old tokens expire', async () => {
    const target = await createTarget({ type: 'oidc', audience: 'https://billing.example' });
    const kidOf = async () => {
      const [req] = (await deliver(target.id)).requests;
      const token = (req.headers.authorization as string).replace(/^Bearer /, '');
      return { token, kid: decodeProtectedHeader(token).kid };
    };
    const before = await kidOf();
    expect(await w.t.app.get(SigningKeysService).rotateIfDue(true)).toBe('rotated');
    // Published at once, signing only after the publish-ahead period (2 s here).
    const jwks = (await w.t.http.get('/.well-known/jwks.json')).body as JSONWebKeySet;
    const kids = jwks.keys.map((k) => k.kid);
    expect(kids).toContain(before.kid);
    expect(kids.length).toBeGreaterThanOrEqual(2);
    const successor = kids.find((kid) => kid !== before.kid);
    const during = await kidOf();
    expect(during.kid).toBe(before.kid);
    const after = await eventually(
      async () => {
        const next = await kidOf();
        expect(next.kid).toBe(successor);
        return next;
      },
      { timeoutMs: 15_000 },
    );
    // One JWKS fetched right after the rotation verifies every token, old key and new.
    for (const { token } of [before, during, after]) {
      await expect(
        jwtVerify(token, createLocalJWKSet(jwks), {
          issuer: ISSUER,
          audience: 'https://billing.example',
        }),
      ).resolves.toBeDefined();
    }
    const later = (await w.t.http.get('/.well-known/jwks.json')).body as JSONWebKeySet;
    expect(later.keys.map((k) => k.kid)).toContain(before.kid);
  });
});
