import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_ALLOWED_HOSTS, parseAllowedHosts } from '../../../src/delivery/address-policy';
import { Webhook } from 'standardwebhooks';
import {
  buildRequestHeaders,
  type ResolveHost,
  type TargetRequest,
  invokeTarget,
  parseRetryAfter,
} from '../../../src/delivery/target-invoker';
import { TargetConnections } from '../../../src/delivery/target-connections';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: string;
}

interface TestServer {
  port: number;
  url: string;
  received: Received[];
  connections: number;
  /** Resolves with the next request whose body has been fully read. */
  nextRequest(): Promise<Received>;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, received: Received) => void;

const servers: { close(): Promise<void> }[] = [];

async function startServer(handler: Handler): Promise<TestServer> {
  const waiters: ((r: Received) => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      state.received.push(received);
      waiters.shift()?.(received);
      handler(req, res, received);
    });
  });
  server.on('connection', () => state.connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as net.AddressInfo).port;
  const state: TestServer = {
    port,
    url: `http://127.0.0.1:${port}`,
    received: [],
    connections: 0,
    nextRequest: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(state);
  return state;
}

async function startRawServer(onData: (socket: net.Socket) => void): Promise<number> {
  const server = net.createServer((socket) => {
    socket.once('data', () => onData(socket));
    socket.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  servers.push({
    close: () => new Promise((resolve) => server.close(() => resolve())),
  });
  return (server.address() as net.AddressInfo).port;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

const allowLoopback = parseAllowedHosts('127.0.0.1');
const NOW = Date.UTC(2030, 0, 2, 3, 4, 5, 678);

function makeRequest(url: string, overrides: Partial<TargetRequest> = {}): TargetRequest {
  return {
    url,
    method: 'POST',
    headers: {},
    timeoutMs: 2000,
    body: { job: 'nightly-report', payload: { n: 1, s: 'ünïcode' } },
    signingSecrets: null,
    idempotencyKey: 'run_123',
    runId: 'run_123',
    attempt: 2,
    fencingToken: 42,
    scheduledAt: '2030-01-02T03:00:00.000Z',
    ...overrides,
  };
}

const staticResolver =
  (...addresses: string[]): ResolveHost =>
  async () =>
    addresses.map((address) => ({ address, family: net.isIP(address) }));

describe('invokeTarget: successful calls', () => {
  it('sends JSON with the dueline headers and a verifiable signature', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/plain' });
      res.end('accepted');
    });
    const secret = 's3cr3t';
    const request = makeRequest(`${server.url}/hooks/run?tenant=t1`, {
      signingSecrets: [secret],
      headers: { 'X-Tenant-Header': 'kept', Authorization: 'Bearer tenant-token' },
    });

    const result = await invokeTarget(request, { allowed: allowLoopback, now: () => NOW });

    expect(result).toEqual({
      kind: 'response',
      status: 200,
      retryAfterMs: null,
      durationMs: expect.any(Number),
      bodySnippet: 'accepted',
      bodyTruncated: false,
      headers: expect.objectContaining({ 'content-type': 'text/plain', date: expect.any(String) }),
    });
    expect(server.received).toHaveLength(1);
    const [got] = server.received;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/hooks/run?tenant=t1');
    expect(JSON.parse(got.body)).toEqual(request.body);
    expect(got.headers).toMatchObject({
      host: `127.0.0.1:${server.port}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(got.body)),
      'idempotency-key': 'run_123',
      'x-dueline-run-id': 'run_123',
      'x-dueline-attempt': '2',
      'x-dueline-fencing-token': '42',
      'x-dueline-scheduled-at': '2030-01-02T03:00:00.000Z',
      'x-dueline-timestamp': String(Math.floor(NOW / 1000)),
      'x-tenant-header': 'kept',
      authorization: 'Bearer tenant-token',
    });
    expect(got.headers['transfer-encoding']).toBeUndefined();

    const timestamp = got.headers['x-dueline-timestamp'] as string;
    const expected = createHmac('sha256', secret)
      .update(Buffer.from(`${timestamp}.${got.body}`, 'utf8'))
      .digest('hex');
    expect(got.headers['x-dueline-signature']).toBe(`v1=${expected}`);
  });

  it('sends no signature headers without a secret', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const result = await invokeTarget(
      makeRequest(server.url, { headers: { 'X-Dueline-Signature': 'v1=forged' } }),
      { allowed: allowLoopback },
    );
    expect(result).toMatchObject({ kind: 'response', status: 204, bodySnippet: '' });
    expect(server.received[0].headers['x-dueline-signature']).toBeUndefined();
    expect(server.received[0].headers['x-dueline-timestamp']).toBeUndefined();
    expect(server.received[0].headers['webhook-signature']).toBeUndefined();
    // The id and timestamp still go: a receiver deduplicates on webhook-id either way.
    expect(server.received[0].headers['webhook-id']).toBe('run_123');
  });

  it('signs with every active secret, Standard Webhooks and X-Dueline alike, newest first', async () => {
    const server = await startServer((_req, res) => res.writeHead(204).end());
    const current = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const previous = `whsec_${Buffer.alloc(24, 9).toString('base64')}`;
    await invokeTarget(
      makeRequest(server.url, {
        signingSecrets: [current, previous],
        headers: { 'webhook-signature': 'v1,forged', 'Webhook-Id': 'evil' },
      }),
      { allowed: allowLoopback, now: () => NOW },
    );
    const [got] = server.received;
    const timestamp = String(Math.floor(NOW / 1000));
    expect(got.headers['webhook-id']).toBe('run_123');
    expect(got.headers['webhook-timestamp']).toBe(timestamp);
    const mac = (key: Buffer) =>
      createHmac('sha256', key).update(`run_123.${timestamp}.${got.body}`).digest('base64');
    expect(got.headers['webhook-signature']).toBe(
      `v1,${mac(Buffer.alloc(32, 7))} v1,${mac(Buffer.alloc(24, 9))}`,
    );
    const hex = (secret: string) =>
      createHmac('sha256', secret).update(`${timestamp}.${got.body}`).digest('hex');
    expect(got.headers['x-dueline-signature']).toBe(`v1=${hex(current)},v1=${hex(previous)}`);
  });

  it('does not let registration headers override ours or hop-by-hop headers', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    const result = await invokeTarget(
      makeRequest(`${server.url}/x`, {
        method: 'put',
        headers: {
          'Idempotency-Key': 'evil',
          'idempotency-key': 'evil2',
          'X-Dueline-Run-Id': 'evil',
          'x-dueline-fencing-token': '999',
          Host: 'evil.example.com',
          'Content-Length': '1',
          'Transfer-Encoding': 'chunked',
          Connection: 'upgrade',
          Upgrade: 'websocket',
          Expect: '100-continue',
          'Content-Type': 'text/plain',
          'Accept-Encoding': 'gzip',
          'User-Agent': 'tenant-agent/1.0',
          'X-Kept': 'yes',
        },
      }),
      { allowed: allowLoopback },
    );
    expect(result).toMatchObject({ kind: 'response', status: 200 });
    const [got] = server.received;
    expect(got.method).toBe('PUT');
    expect(got.headers).toMatchObject({
      'idempotency-key': 'run_123',
      'x-dueline-run-id': 'run_123',
      'x-dueline-fencing-token': '42',
      host: `127.0.0.1:${server.port}`,
      'content-length': String(Buffer.byteLength(got.body)),
      'content-type': 'application/json',
      'accept-encoding': 'identity',
      'user-agent': 'tenant-agent/1.0',
      'x-kept': 'yes',
    });
    expect(got.headers['transfer-encoding']).toBeUndefined();
    expect(got.headers.upgrade).toBeUndefined();
    expect(got.headers.expect).toBeUndefined();
    // Exactly one Idempotency-Key on the wire, not a merged or duplicated one.
    const keys = got.rawHeaders.filter((_v, i) => i % 2 === 0).map((n) => n.toLowerCase());
    expect(keys.filter((k) => k === 'idempotency-key')).toHaveLength(1);
    expect(JSON.parse(got.body)).toEqual(makeRequest('').body);
  });

  it('reports 503 with Retry-After in seconds', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(503, { 'Retry-After': '7' });
      res.end('busy');
    });
    const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
    expect(result).toMatchObject({
      kind: 'response',
      status: 503,
      retryAfterMs: 7000,
      bodySnippet: 'busy',
    });
  });

  it('reports 429 with Retry-After as an HTTP date relative to the injected clock', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(429, { 'Retry-After': new Date(NOW + 90_000).toUTCString() });
      res.end();
    });
    const result = await invokeTarget(makeRequest(server.url), {
      allowed: allowLoopback,
      now: () => NOW,
    });
    // toUTCString drops milliseconds.
    expect(result).toMatchObject({ kind: 'response', status: 429, retryAfterMs: 90_000 - 678 });
  });

  it('does not follow redirects', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(302, { Location: '/elsewhere' });
      res.end();
    });
    const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
    expect(result).toMatchObject({
      kind: 'response',
      status: 302,
      headers: { location: '/elsewhere' },
    });
    expect(server.received).toHaveLength(1);
  });

  it('keeps only allow-listed response headers, never cookies, and scrubs the credentials sent', async () => {
    const token = 'tok_0123456789abcdef';
    const server = await startServer((req, res) => {
      res.writeHead(401, {
        'Set-Cookie': 'session=abc',
        'X-Echo': String(req.headers.authorization),
        'X-Request-Id': `req-for-${token}`,
        'Content-Type': 'text/plain',
      });
      // Echoes the request, as debugging endpoints do.
      res.end(`you sent ${req.headers.authorization} and ${token}\u0000`);
    });
    const result = await invokeTarget(
      makeRequest(server.url, { credentials: { Authorization: `Bearer ${token}` } }),
      {
        allowed: allowLoopback,
        keptResponseHeaders: ['x-echo', 'x-request-id', 'set-cookie', 'content-type'],
      },
    );
    expect(server.received[0].headers.authorization).toBe(`Bearer ${token}`);
    if (result.kind !== 'response') throw new Error(result.kind);
    expect(result.headers).toEqual({
      'x-echo': '[redacted]',
      'x-request-id': 'req-for-[redacted]',
      'content-type': 'text/plain',
    });
    expect(result.bodySnippet).toBe('you sent [redacted] and [redacted]');
    expect(JSON.stringify(result)).not.toContain(token);
  });

  it('re-checks the address policy on every new connection, pooled or not', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(200, { Connection: 'close' });
      res.end('ok');
    });
    const answers = [['127.0.0.1'], ['10.0.0.7']];
    const pools = new TargetConnections();
    try {
      const options = {
        allowed: allowLoopback,
        pools,
        resolveHost: async () => answers.shift()!.map((address) => ({ address, family: 4 })),
      };
      const url = `http://rebinding.example.com:${server.port}/`;
      expect(await invokeTarget(makeRequest(url), options)).toMatchObject({ status: 200 });
      // The first connection closed: the next one resolves again and is refused.
      expect(await invokeTarget(makeRequest(url), options)).toMatchObject({
        kind: 'not_sent',
        code: 'address_refused',
      });
      expect(server.received).toHaveLength(1);
    } finally {
      pools.close();
    }
  });

  it('keeps only a bounded snippet and does not wait for the rest of a large body', async () => {
    const server = await startServer((_req, res) => {
      res.writeHead(500, { 'Content-Type': 'text/plain' });
      // 64 KiB and the response never ends: the call must return without reading to the end.
      res.write('x'.repeat(64 * 1024));
    });
    const result = await invokeTarget(makeRequest(server.url, { timeoutMs: 10_000 }), {
      allowed: allowLoopback,
    });
    expect(result).toMatchObject({ kind: 'response', status: 500, bodyTruncated: true });
    if (result.kind !== 'response') return;
    expect(result.bodySnippet).toBe('x'.repeat(4096));
    expect(result.durationMs).toBeLessThan(2000);
  });

  it('does not split a multi-byte character at the snippet limit', async () => {
    const server = await startServer((_req, res) => res.end('é'.repeat(10)));
    const result = await invokeTarget(makeRequest(server.url), {
      allowed: allowLoopback,
      maxBodySnippetBytes: 5,
    });
    expect(result).toMatchObject({ kind: 'response', bodySnippet: 'éé', bodyTruncated: true });
  });

  it('connects to the address the guarded lookup returned', async () => {
    const server = await startServer((_req, res) => res.end('via lookup'));
    const result = await invokeTarget(makeRequest(`http://hooks.example.com:${server.port}/`), {
      allowed: allowLoopback,
      resolveHost: staticResolver('127.0.0.1'),
    });
    expect(result).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'via lookup' });
    expect(server.received[0].headers.host).toBe(`hooks.example.com:${server.port}`);
  });
});

describe('invokeTarget: pooled connections (targets that deduplicate)', () => {
  let pools: TargetConnections;
  beforeEach(() => (pools = new TargetConnections()));
  afterEach(() => pools.close());

  it('reuses one connection for calls in turn; without pools every call opens its own', async () => {
    const server = await startServer((_req, res) => res.end('ok'));
    for (let i = 0; i < 3; i++) {
      const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback, pools });
      expect(result).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'ok' });
    }
    expect(server.received).toHaveLength(3);
    expect(server.connections).toBe(1);

    const fresh = await startServer((_req, res) => res.end('ok'));
    for (let i = 0; i < 2; i++)
      await invokeTarget(makeRequest(fresh.url), { allowed: allowLoopback });
    expect(fresh.connections).toBe(2);
  });

  it('never returns a connection whose response it stopped reading', async () => {
    const server = await startServer((req, res) => {
      if (req.url === '/big') {
        res.writeHead(200);
        res.write('x'.repeat(64 * 1024)); // never ends
      } else res.end('small');
    });
    const big = await invokeTarget(makeRequest(`${server.url}/big`), {
      allowed: allowLoopback,
      pools,
    });
    expect(big).toMatchObject({ kind: 'response', bodyTruncated: true });
    const next = await invokeTarget(makeRequest(`${server.url}/small`), {
      allowed: allowLoopback,
      pools,
    });
    expect(next).toMatchObject({ kind: 'response', bodySnippet: 'small' });
    expect(server.connections).toBe(2);
  });

  it('a failure on a reused connection is "maybe sent", never "not sent"', async () => {
    // The first request gets its answer; the connection then dies under the second.
    let calls = 0;
    const server = await startServer((req, res) => {
      calls++;
      if (calls === 1) return res.end('first');
      req.socket.destroy();
    });
    const first = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback, pools });
    expect(first).toMatchObject({ kind: 'response', bodySnippet: 'first' });
    const second = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback, pools });
    expect(server.connections).toBe(1);
    expect(second).toMatchObject({ kind: 'maybe_sent', code: 'reset' });
  });
});

describe('invokeTarget: failures after the request was sent', () => {
  it('times out on a server that never answers (maybe_sent)', async () => {
    const server = await startServer(() => undefined);
    const result = await invokeTarget(makeRequest(server.url, { timeoutMs: 200 }), {
      allowed: allowLoopback,
    });
    expect(result).toMatchObject({ kind: 'maybe_sent', code: 'timeout' });
    expect(result.durationMs).toBeGreaterThanOrEqual(190);
    expect(server.received).toHaveLength(1);
  });

  it.each([
    ['closes', (socket: net.Socket) => socket.destroy()],
    ['resets', (socket: net.Socket) => socket.resetAndDestroy()],
  ])(
    'reports a reset when the server %s the socket after reading the request',
    async (_l, kill) => {
      const server = await startServer((req) => kill(req.socket));
      const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
      expect(result).toMatchObject({ kind: 'maybe_sent', code: 'reset' });
      expect(server.received).toHaveLength(1);
    },
  );

  it('reports an abort mid-request as maybe_sent', async () => {
    const server = await startServer(() => undefined);
    const controller = new AbortController();
    const pending = invokeTarget(makeRequest(server.url), {
      allowed: allowLoopback,
      signal: controller.signal,
    });
    await server.nextRequest();
    controller.abort(new Error('lease lost'));
    const result = await pending;
    expect(result).toMatchObject({ kind: 'maybe_sent', code: 'aborted' });
    if (result.kind === 'maybe_sent') expect(result.error).toMatch(/lease lost/);
  });

  it('reports a malformed response as a protocol error', async () => {
    const port = await startRawServer((socket) => socket.end('NOT HTTP AT ALL\r\n\r\n'));
    const result = await invokeTarget(makeRequest(`http://127.0.0.1:${port}/`), {
      allowed: allowLoopback,
    });
    expect(result).toMatchObject({ kind: 'maybe_sent', code: 'protocol_error' });
  });

  it('returns the status if the connection dies while the body is read', async () => {
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'Content-Length': '100' });
      res.write('partial', () => req.socket.destroy());
    });
    const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
    expect(result).toMatchObject({ kind: 'response', status: 200, bodyTruncated: true });
  });
});

describe('invokeTarget: failures before anything was sent', () => {
  it('reports a closed port as connect_refused', async () => {
    const probe = net.createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as net.AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));

    const result = await invokeTarget(makeRequest(`http://127.0.0.1:${port}/`), {
      allowed: allowLoopback,
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'connect_refused' });
  });

  it('refuses loopback when it is not allowed, without connecting', async () => {
    const server = await startServer((_req, res) => res.end());
    const result = await invokeTarget(makeRequest(server.url), { allowed: NO_ALLOWED_HOSTS });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'address_refused' });
    if (result.kind === 'not_sent') {
      expect(result.error).toMatch(/127\.0\.0\.1 is a loopback address.*TARGET_ALLOWED_HOSTS/);
    }
    expect(server.connections).toBe(0);
    expect(server.received).toHaveLength(0);
  });

  it.each([
    ['a private address', ['127.0.0.1']],
    ['a mixed public/private answer', ['93.184.216.34', '127.0.0.1']],
    ['an IPv4-mapped loopback address', ['::ffff:127.0.0.1']],
  ])('refuses a public name that resolves to %s (DNS rebinding)', async (_label, addresses) => {
    const server = await startServer((_req, res) => res.end());
    const result = await invokeTarget(makeRequest(`http://rebind.example.com:${server.port}/`), {
      allowed: NO_ALLOWED_HOSTS,
      resolveHost: staticResolver(...addresses),
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'address_refused' });
    if (result.kind === 'not_sent') {
      expect(result.error).toMatch(/rebind\.example\.com resolved to .*127\.0\.0\.1/);
    }
    // A later allowed call is the barrier: had the refused call connected, it would be counted.
    await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
    expect(server.connections).toBe(1);
    expect(server.received).toHaveLength(1);
  });

  it('reports a DNS failure as dns_failed', async () => {
    const result = await invokeTarget(makeRequest('http://nowhere.example.com/'), {
      allowed: NO_ALLOWED_HOSTS,
      resolveHost: async (hostname) => {
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      },
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'dns_failed' });
    if (result.kind === 'not_sent') expect(result.error).toMatch(/ENOTFOUND/);
  });

  it('reports an empty DNS answer as dns_failed', async () => {
    const result = await invokeTarget(makeRequest('http://empty.example.com/'), {
      allowed: NO_ALLOWED_HOSTS,
      resolveHost: staticResolver(),
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'dns_failed' });
  });

  it('reports a timeout before the connection was made as connect_timeout', async () => {
    const result = await invokeTarget(
      makeRequest('http://slow-dns.example.com/', { timeoutMs: 100 }),
      {
        allowed: NO_ALLOWED_HOSTS,
        resolveHost: () => new Promise(() => undefined),
      },
    );
    expect(result).toMatchObject({ kind: 'not_sent', code: 'connect_timeout' });
  });

  it('reports a failed TLS handshake as tls_failed', async () => {
    // An HTTP server answers the ClientHello with garbage, so the handshake fails after TCP
    // connected but before any request byte could be sent.
    const server = await startServer((_req, res) => res.end());
    const result = await invokeTarget(makeRequest(`https://127.0.0.1:${server.port}/`), {
      allowed: allowLoopback,
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'tls_failed' });
    expect(server.received).toHaveLength(0);
  });

  it('does not start when the signal is already aborted', async () => {
    const server = await startServer((_req, res) => res.end());
    const controller = new AbortController();
    controller.abort();
    const result = await invokeTarget(makeRequest(server.url), {
      allowed: allowLoopback,
      signal: controller.signal,
    });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'aborted_before_send' });
    expect(server.connections).toBe(0);
  });

  it('reports an abort during DNS resolution as aborted_before_send', async () => {
    const controller = new AbortController();
    let resolving!: () => void;
    const started = new Promise<void>((resolve) => (resolving = resolve));
    const pending = invokeTarget(makeRequest('http://slow-dns.example.com/'), {
      allowed: NO_ALLOWED_HOSTS,
      signal: controller.signal,
      resolveHost: () => {
        resolving();
        return new Promise(() => undefined);
      },
    });
    await started;
    controller.abort();
    expect(await pending).toMatchObject({ kind: 'not_sent', code: 'aborted_before_send' });
  });

  it.each([
    ['an invalid URL', makeRequest('not a url'), 'invalid_url'],
    ['a non-http scheme', makeRequest('ftp://example.com/'), 'invalid_url'],
    [
      'an illegal method',
      makeRequest('http://127.0.0.1:1/', { method: 'BAD METHOD' }),
      'invalid_request',
    ],
    [
      'a header value with a newline',
      makeRequest('http://127.0.0.1:1/', { headers: { 'X-Bad': 'a\r\nInjected: 1' } }),
      'invalid_request',
    ],
    [
      'an unserialisable body',
      makeRequest('http://127.0.0.1:1/', { body: { n: BigInt(1) } }),
      'invalid_request',
    ],
    ['a zero timeout', makeRequest('http://127.0.0.1:1/', { timeoutMs: 0 }), 'invalid_request'],
  ])('rejects %s without sending', async (_label, request, code) => {
    const result = await invokeTarget(request, { allowed: allowLoopback });
    expect(result).toMatchObject({ kind: 'not_sent', code });
  });
});

/** A throwaway self-signed certificate for 127.0.0.1, or null where openssl is unavailable. */
function makeCertificate(): { key: Buffer; cert: Buffer } | null {
  const dir = mkdtempSync(join(tmpdir(), 'dueline-tls-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1',
      ],
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const certificate = makeCertificate();

(certificate ? describe : describe.skip)('invokeTarget over https', () => {
  async function startTlsServer(handler: http.RequestListener) {
    const received: string[] = [];
    const server = https.createServer({ ...certificate! }, (req, res) => {
      received.push(req.url ?? '');
      handler(req, res);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push({
      close: () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    });
    const port = (server.address() as net.AddressInfo).port;
    return { url: `https://127.0.0.1:${port}/tls`, received };
  }

  it('calls a target whose CA is trusted', async () => {
    const server = await startTlsServer((_req, res) => res.end('secure'));
    const result = await invokeTarget(makeRequest(server.url), {
      allowed: allowLoopback,
      extraCaCerts: [certificate!.cert],
    });
    expect(result).toMatchObject({ kind: 'response', status: 200, bodySnippet: 'secure' });
    expect(server.received).toEqual(['/tls']);
  });

  it('treats a timeout after the handshake as maybe_sent', async () => {
    const server = await startTlsServer(() => undefined);
    // Long enough for the TLS handshake to finish on a loaded 2-core machine, so the timeout
    // really falls after the request was sent.
    const result = await invokeTarget(makeRequest(server.url, { timeoutMs: 1500 }), {
      allowed: allowLoopback,
      extraCaCerts: [certificate!.cert],
    });
    expect(result).toMatchObject({ kind: 'maybe_sent', code: 'timeout' });
    expect(server.received).toEqual(['/tls']);
  });

  it('reuses a pooled TLS connection, and a timeout on it is maybe_sent, not tls_failed', async () => {
    let calls = 0;
    const server = await startTlsServer((_req, res) => {
      calls++;
      if (calls === 1) res.end('secure'); // the second request is never answered
    });
    const pools = new TargetConnections();
    try {
      const options = { allowed: allowLoopback, extraCaCerts: [certificate!.cert], pools };
      expect(await invokeTarget(makeRequest(server.url), options)).toMatchObject({
        kind: 'response',
        bodySnippet: 'secure',
      });
      const second = await invokeTarget(makeRequest(server.url, { timeoutMs: 1500 }), options);
      expect(second).toMatchObject({ kind: 'maybe_sent', code: 'timeout' });
      expect(server.received).toEqual(['/tls', '/tls']);
    } finally {
      pools.close();
    }
  });

  it('reports an untrusted certificate as tls_failed without sending the request', async () => {
    const server = await startTlsServer((_req, res) => res.end());
    const result = await invokeTarget(makeRequest(server.url), { allowed: allowLoopback });
    expect(result).toMatchObject({ kind: 'not_sent', code: 'tls_failed' });
    if (result.kind === 'not_sent') expect(result.error).toMatch(/self[- ]signed/i);
    expect(server.received).toEqual([]);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(2030, 0, 1, 0, 0, 0);
  it.each([
    [undefined, null],
    ['', null],
    ['0', 0],
    ['120', 120_000],
    [' 5 ', 5000],
    ['99999999999', 24 * 60 * 60 * 1000],
    ['-5', null],
    ['1.5', null],
    ['soon', null],
    ['Tue, 01 Jan 2030 00:01:00 GMT', 60_000],
    ['Tuesday, 01-Jan-30 00:01:00 GMT', 60_000],
    ['Tue Jan  1 00:01:00 2030', 60_000], // asctime is GMT whatever the local zone
    ['Mon, 31 Dec 2029 23:00:00 GMT', 0],
    ['Fri, 01 Jan 2100 00:00:00 GMT', 24 * 60 * 60 * 1000],
  ])('%j -> %p', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('buildRequestHeaders for an event delivery', () => {
  const secret = `whsec_${Buffer.alloc(32, 9).toString('base64')}`;
  const event: TargetRequest = {
    url: 'http://127.0.0.1/hook',
    method: 'POST',
    timeoutMs: 1000,
    body: { type: 'run.failed' },
    signingSecrets: [secret],
    idempotencyKey: 'evt-1',
    webhookId: 'evt-1',
  };

  it('signs the event id as webhook-id and sends no run headers', () => {
    const body = JSON.stringify(event.body);
    // The library refuses a timestamp far from its own clock.
    const headers = buildRequestHeaders(event, body, Date.now());
    expect(headers['webhook-id']).toBe('evt-1');
    expect(headers['Idempotency-Key']).toBe('evt-1');
    expect(
      Object.keys(headers).filter((name) => name.toLowerCase().startsWith('x-dueline-run')),
    ).toEqual([]);
    expect(headers['X-Dueline-Attempt']).toBeUndefined();
    expect(() =>
      new Webhook(secret).verify(body, {
        'webhook-id': headers['webhook-id'],
        'webhook-timestamp': headers['webhook-timestamp'],
        'webhook-signature': headers['webhook-signature'],
      }),
    ).not.toThrow();
  });

  it('refuses a request that names neither a run nor a webhook id', () => {
    expect(() => buildRequestHeaders({ ...event, webhookId: undefined }, '{}', 0)).toThrow(
      /runId or a webhookId/,
    );
  });
});
