import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { unusedListenPort } from '../../src/common';
import { migrateDatabase } from '../../src/schema';
import { parseKeyring } from '../../src/secrets';
import { eventually } from '../support/eventually';
import { HttpSink } from '../support/http-sink';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_KEY } from '../support/test-app';

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'dist/src/main.js');

// Every secret a target carries, and the ones a call or a failure could carry along.
const BEARER = 'leak-check-bearer-5d1f0a';
const BASIC_PASSWORD = 'leak-check-basic-pw-77c2';
const CLIENT_SECRET = 'leak-check-client-secret-9e41';
const SIGNING_SECRET = `whsec_${Buffer.alloc(32, 0x3c).toString('base64')}`;
const REFUSED_SECRET = 'leak-check-refused-secret-0b6d';
const SECRETS = [
  BEARER,
  BASIC_PASSWORD,
  CLIENT_SECRET,
  SIGNING_SECRET,
  SIGNING_SECRET.slice('whsec_'.length),
  REFUSED_SECRET,
  Buffer.from(`u:${BASIC_PASSWORD}`).toString('base64'),
  Buffer.from(`client:${CLIENT_SECRET}`).toString('base64'),
];

/** Collects what an OTLP/HTTP exporter sends (JSON): the spans as the collector would see them. */
async function otlpReceiver(): Promise<{ url: string; bodies: string[]; close(): Promise<void> }> {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      bodies.push(body);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/**
 * The real service, with debug logs and traces exported, driven through calls that carry
 * secrets (target credentials, a refused secret, a token endpoint that echoes its request, a
 * target that answers 401 and echoes the Authorization header): no secret appears in what it
 * printed, in the spans it exported, or in any answer.
 */
describe('no secret in logs, spans, answers or errors', () => {
  let db: TestDatabase;
  let sink: HttpSink;
  let otlp: Awaited<ReturnType<typeof otlpReceiver>>;
  let child: ChildProcessWithoutNullStreams;
  let output = '';
  const answers: string[] = [];
  let base = '';

  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        'Content-Type': 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    answers.push(text);
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    await migrateDatabase(db.url, parseKeyring(TEST_SECRETS_KEY));
    sink = await HttpSink.start();
    otlp = await otlpReceiver();
    const port = await unusedListenPort();
    base = `http://127.0.0.1:${port}`;
    child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: db.url,
        ADMIN_TOKEN: TEST_ADMIN_TOKEN,
        SECRETS_KEY: TEST_SECRETS_KEY,
        PORT: String(port),
        LOG_LEVEL: 'trace',
        TARGET_ALLOWED_HOSTS: '127.0.0.1',
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        EXECUTION_LEASE_MS: '3000',
        EXECUTION_HEARTBEAT_INTERVAL_MS: '200',
      },
    });
    child.stdout.setEncoding('utf8').on('data', (c: string) => (output += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
    await eventually(
      async () => expect((await fetch(`${base}/health/ready`).catch(() => null))?.status).toBe(200),
      { timeoutMs: 60_000, intervalMs: 200 },
    );
  });
  afterAll(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await sink.close();
    await otlp.close();
    await db.drop();
  });

  it('drives calls with secrets, then finds none of them anywhere', async () => {
    const tenant = (await call('POST', '/tenants', { name: 'leaks' }, TEST_ADMIN_TOKEN)).body;
    const key = tenant.apiKey as string;
    // The sink answers 401 and echoes the Authorization header it got.
    sink.behave((req) => ({
      status: 401,
      body: { youSent: req.headers.authorization },
      headers: { 'X-Echo': String(req.headers.authorization) },
    }));
    // A token endpoint that refuses and echoes the client's credentials.
    const tokenServer = createServer((req, res) => {
      res.writeHead(400, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: `bad client ${req.headers.authorization}` }));
    });
    await new Promise<void>((done) => tokenServer.listen(0, '127.0.0.1', done));
    const tokenUrl = `http://127.0.0.1:${(tokenServer.address() as AddressInfo).port}/token`;

    const targets = [
      { auth: { type: 'bearer', token: BEARER }, signingSecret: SIGNING_SECRET },
      { auth: { type: 'basic', username: 'u', password: BASIC_PASSWORD } },
      {
        auth: {
          type: 'oauth2_client_credentials',
          tokenUrl,
          clientId: 'client',
          clientSecret: CLIENT_SECRET,
        },
      },
      { auth: { type: 'oidc' } },
    ];
    const runs: string[] = [];
    for (const [i, extra] of targets.entries()) {
      const target = await call(
        'POST',
        '/targets',
        { name: `t${i}`, url: sink.url(), ...extra },
        key,
      );
      expect(target.status).toBe(201);
      const schedule = await fetch(`${base}/schedules`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Authorization: `Bearer ${key}`,
          'Idempotency-Key': `leak-${i}`,
        },
        body: JSON.stringify({
          name: `s${i}`,
          targetId: target.body.id,
          runAt: new Date(Date.now() + 3600_000).toISOString(),
          retryPolicy: { maxAttempts: 1 },
        }),
      }).then((r) => r.json() as Promise<{ id: string }>);
      const run = await call('POST', `/schedules/${schedule.id}/trigger`, undefined, key);
      runs.push(run.body.id);
    }
    // Refused inputs carrying a secret.
    expect(
      (
        await call(
          'POST',
          '/targets',
          {
            name: 'bad',
            url: sink.url(),
            auth: { type: 'basic', username: 'a:b', password: REFUSED_SECRET },
          },
          key,
        )
      ).status,
    ).toBe(400);
    expect(
      (
        await call(
          'POST',
          '/targets',
          { name: 'bad2', url: sink.url(), signingSecret: REFUSED_SECRET },
          key,
        )
      ).status,
    ).toBe(400);

    for (const id of runs) {
      await eventually(async () =>
        expect((await call('GET', `/runs/${id}`, undefined, key)).body.state).toBe('FAILED'),
      );
    }
    // The calls did carry the secrets (so the checks below are not vacuous).
    expect(sink.requests.map((r) => r.headers.authorization)).toEqual(
      expect.arrayContaining([`Bearer ${BEARER}`, expect.stringMatching(/^Basic /)]),
    );
    tokenServer.close();

    child.kill('SIGTERM');
    await new Promise((done) => child.once('exit', done));
    expect(output).toMatch(/"level":10|"level":20|"level":30/);
    expect(otlp.bodies.join('')).toContain('target.call');
    // The echoes were recorded, scrubbed: the attempts' responses and the token error say so.
    expect(answers.join('')).toContain('[redacted]');
    const everything = [output, ...otlp.bodies, ...answers].join('\n');
    for (const secret of SECRETS) expect(everything).not.toContain(secret);
    expect(everything).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/); // no JWT either
  });
});
