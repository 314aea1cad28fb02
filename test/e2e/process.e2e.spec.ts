import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { apiKeyParts } from '../support/api-keys';
import { eventually } from '../support/eventually';
import { listeningPort } from '../support/service-banner';

/**
 * The newcomer experience on the real entry point: `node dist/src/main.js` with nothing but a
 * DATA_DIR, the embedded PostgreSQL it starts, what it prints, how it stops and how it restarts.
 * The tests run in order and share one DATA_DIR, as a person running `npm start` twice would.
 */

jest.setTimeout(120_000);

const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'dist/src/main.js');

interface Service {
  child: ChildProcessWithoutNullStreams;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves once stdout and stderr have been read to their end. */
  closed: Promise<void>;
}

interface StartedService extends Service {
  /** The port the service chose (PORT=0) and printed in its first banner line. */
  port: number;
}

const children: ChildProcessWithoutNullStreams[] = [];

function childEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'info', ...overrides };
  // The parent may run against a shared server or carry a developer's settings; the newcomer
  // has none of them, and DATABASE_URL in particular would skip the embedded PostgreSQL.
  for (const name of ['DATABASE_URL', 'ADMIN_TOKEN', 'ROLES', 'TARGET_ALLOWED_HOSTS']) {
    if (!(name in overrides)) delete env[name];
  }
  return env;
}

function spawnService(env: Record<string, string>): Service {
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: childEnv(env) });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  const closed = new Promise<void>((done) => child.once('close', () => done()));
  return { child, stdout: () => stdout, stderr: () => stderr, exited, closed };
}

/** With PORT=0: the service binds a port the kernel chooses, read back from its banner. */
async function startService(dataDir: string): Promise<StartedService> {
  const service = spawnService({ DATA_DIR: dataDir, PORT: '0' });
  const report = () => `stdout:\n${service.stdout()}\nstderr:\n${service.stderr()}`;
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  void service.exited.then((status) => (exit = status));
  // First start runs initdb, which takes a few seconds; a crash must not wait out the deadline.
  let status: number | null = null;
  try {
    const port = await eventually(
      async () => {
        if (exit) throw new ExitedEarly(exit);
        const port = listeningPort(service.stdout());
        expect(port).not.toBeNull();
        status = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
          (res) => res.status,
          () => null,
        );
        expect(status).toBe(200);
        return port!;
      },
      { timeoutMs: 60_000, intervalMs: 100, until: (error) => error instanceof ExitedEarly },
    );
    return { ...service, port };
  } catch (error) {
    if (error instanceof ExitedEarly) {
      throw new Error(`dueline exited before it was ready: ${JSON.stringify(exit)}\n${report()}`, {
        cause: error,
      });
    }
    throw new Error(`dueline was not ready within 60 s (last answer: ${status})\n${report()}`, {
      cause: error,
    });
  }
}

/** The service process ended while we waited for it to be ready: waiting longer is pointless. */
class ExitedEarly extends Error {
  constructor(readonly status: object) {
    super('exited before it was ready');
  }
}

function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function stopService(service: Service): Promise<number | null> {
  service.child.kill('SIGTERM');
  const { code, signal } = await within(service.exited, 20_000, 'exit after SIGTERM');
  expect(signal).toBeNull();
  await within(service.closed, 5_000, 'closing stdout/stderr');
  return code;
}

/** Live processes whose command line names the path: the embedded postmaster runs `-D <dir>/pg`. */
function processesUsing(path: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(path)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

const ADMIN_TOKEN_LINE = /^admin token \(stored in (.+)\): (\S+)$/m;

function printedAdminToken(stdout: string): { path: string; token: string } {
  const match = ADMIN_TOKEN_LINE.exec(stdout);
  if (!match) throw new Error(`no admin token line in stdout:\n${stdout}`);
  return { path: match[1], token: match[2] };
}

function occurrences(haystack: string, needle: string): number {
  return haystack.split(needle).length - 1;
}

function jsonLines(output: string): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What main.ts prints with console.log, before or outside the structured logger. */
const BANNER_LINE =
  /^(dueline[: ]|database: |migrations[: ]|console: |Swagger UI: |admin token |create a tenant: )/;

describe('node dist/src/main.js, as a newcomer runs it', () => {
  const marker = `marker-${randomBytes(6).toString('hex')}`;
  const requestId = `req-${randomBytes(6).toString('hex')}`;
  let dataDir: string;
  let first: StartedService;
  let adminToken: string;
  let tenant: { id: string; apiKey: string };

  beforeAll(() => {
    if (!existsSync(MAIN)) {
      throw new Error(`${MAIN} is missing: build first (npx nest build, or npm test builds it)`);
    }
    dataDir = mkdtempSync(join(tmpdir(), 'dueline-process-'));
    // Tests run as root, so the embedded server runs as `postgres` and must reach the cluster.
    chmodSync(dataDir, 0o755);
  });

  afterAll(() => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    if (!dataDir) return;
    // A SIGKILLed service cannot stop its postmaster, which would otherwise outlive the run.
    for (const pid of processesUsing(dataDir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('starts, prints where to begin, and serves the docs', async () => {
    first = await startService(dataDir);
    const stdout = first.stdout();

    expect(stdout).toMatch(new RegExp(`^Swagger UI: http://\\S+:${first.port}/docs\\s`, 'm'));
    expect(stdout).toMatch(new RegExp(`^console: http://\\S+:${first.port}/console\\s`, 'm'));
    // Every core by default: the worker role runs in processes of its own beside this one.
    expect(stdout).toMatch(/^dueline is listening on .*the worker role in [1-9]\d* process\(es\)/m);
    const printed = printedAdminToken(stdout);
    const stored = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
    expect(printed.path).toBe(join(dataDir, 'admin-token'));
    expect(printed.token).toBe(stored);
    expect(stored.length).toBeGreaterThanOrEqual(16);
    adminToken = stored;

    const docs = await fetch(`http://127.0.0.1:${first.port}/docs`);
    expect(docs.status).toBe(200);
    const openApi = await fetch(`http://127.0.0.1:${first.port}/docs-json`);
    expect(openApi.status).toBe(200);
    const document = (await openApi.json()) as { paths: Record<string, unknown> };
    expect(document.paths['/tenants']).toBeDefined();
  });

  it('logs structured JSON that names requests and leaks no secret or body', async () => {
    const url = `http://127.0.0.1:${first.port}`;
    const created = await fetch(`${url}/tenants`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${adminToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: marker }),
    });
    expect(created.status).toBe(201);
    tenant = (await created.json()) as { id: string; apiKey: string };
    expect(tenant.apiKey).toEqual(expect.any(String));

    // A tenant key on an admin route: refused, and the refusal is logged.
    const refused = await fetch(`${url}/tenants/${tenant.id}`, {
      headers: { Authorization: `Bearer ${tenant.apiKey}` },
    });
    expect(refused.status).toBe(401);

    // The marker rides in the query string too: a request is logged by its path only.
    const traced = await fetch(`${url}/tenants/${tenant.id}?note=${marker}`, {
      headers: { Authorization: `Bearer ${adminToken}`, 'X-Request-Id': requestId },
    });
    expect(traced.status).toBe(200);
    expect(traced.headers.get('x-request-id')).toBe(requestId);

    // The log lines reach us through a pipe, after the responses.
    const traceLine = await eventually(() => {
      const line = jsonLines(first.stdout()).find(
        (entry) => (entry.req as { id?: string } | undefined)?.id === requestId,
      );
      if (!line) throw new Error(`no JSON log line with request id ${requestId}`);
      return line;
    });
    expect(traceLine.req).toEqual({
      id: requestId,
      method: 'GET',
      path: `/tenants/${tenant.id}`,
    });
    await eventually(() =>
      expect(
        jsonLines(first.stdout()).some(
          (entry) => (entry.res as { status?: number } | undefined)?.status === 401,
        ),
      ).toBe(true),
    );

    assertNoLeaks(first);
  });

  function assertNoLeaks(service: Service): void {
    const output = service.stdout() + service.stderr();
    // The banner is the one place the admin token belongs.
    expect(occurrences(output, adminToken)).toBe(1);
    expect(ADMIN_TOKEN_LINE.exec(output)?.[2]).toBe(adminToken);
    expect(output).not.toContain(tenant.apiKey);
    // The secret part (base64url, so it may hold underscores itself).
    expect(output).not.toContain(apiKeyParts(tenant.apiKey).secret);
    expect(output).not.toContain(marker);

    const lines = service.stdout().split('\n').filter(Boolean);
    expect(lines.filter((line) => !line.startsWith('{') && !BANNER_LINE.test(line))).toEqual([]);
    const entries = jsonLines(service.stdout());
    expect(entries.length).toBeGreaterThan(0);
    for (const entry of entries) {
      expect(entry).toEqual(
        expect.objectContaining({ level: expect.any(Number), msg: expect.any(String) }),
      );
    }
    const requests = entries.filter((entry) => entry.req !== undefined);
    expect(requests.length).toBeGreaterThanOrEqual(3);
    for (const { req } of requests) {
      expect(req).toEqual(
        expect.objectContaining({ method: expect.any(String), path: expect.any(String) }),
      );
      expect(req).not.toHaveProperty('headers');
    }
  }

  it('stops on SIGTERM with exit code 0 and takes the embedded PostgreSQL with it', async () => {
    // Without a live postmaster to find, the absence check below would prove nothing.
    expect(processesUsing(dataDir).length).toBeGreaterThan(0);
    const started = Date.now();

    expect(await stopService(first)).toBe(0);

    expect(first.stdout()).toMatch(/^dueline: stopped$/m);
    expect(processesUsing(dataDir)).toEqual([]);
    expect(first.stderr()).toBe('');
    assertNoLeaks(first);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('restarts on the same DATA_DIR with its data, migrations and admin token', async () => {
    const second = await startService(dataDir);
    const stdout = second.stdout();

    expect(stdout).toMatch(/^migrations: up to date$/m);
    expect(printedAdminToken(stdout).token).toBe(adminToken);
    expect(readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()).toBe(adminToken);
    const read = await fetch(`http://127.0.0.1:${second.port}/tenants/${tenant.id}`, {
      headers: { Authorization: `Bearer ${adminToken}` },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ id: tenant.id, name: marker });

    expect(await stopService(second)).toBe(0);
    expect(second.stdout()).toMatch(/^dueline: stopped$/m);
    expect(processesUsing(dataDir)).toEqual([]);
    expect(second.stderr()).toBe('');
  });

  it('fails fast with one line naming a bad variable', async () => {
    const untouched = join(dataDir, 'never-created');
    const started = Date.now();
    const service = spawnService({ PORT: 'abc', DATA_DIR: untouched });

    // Loading the application's modules takes seconds on a busy machine; the bound is there to
    // catch a process that goes on to start anything, which DATA_DIR below shows more directly.
    const { code } = await within(service.exited, 15_000, 'exit on a bad PORT');
    await within(service.closed, 5_000, 'closing stdout/stderr');

    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    const lines = service.stderr().split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid configuration: PORT /);
    expect(service.stdout()).not.toContain('listening');
    expect(existsSync(untouched)).toBe(false);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
