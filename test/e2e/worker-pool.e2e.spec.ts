import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from 'pg';
import { eventually } from '../support/eventually';
import { gate, HttpSink } from '../support/http-sink';
import { listeningPort } from '../support/service-banner';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * The built service with the default roles and WORKER_PROCESSES=2: the primary runs api,
 * poller and relay, two forked children run the worker role. Runs are delivered by the
 * children; a child killed with SIGKILL loses nothing (its runs are swept after the lease and
 * delivered again, the child is forked again); SIGTERM drains the children and then the
 * primary, leaving no run RUNNING, and a restart delivers whatever was released.
 */

jest.setTimeout(240_000);

const ROOT = resolve(__dirname, '../..');
const MAIN = join(ROOT, 'dist/src/main.js');
const ADMIN_TOKEN = `admin-${randomBytes(12).toString('hex')}`;
const SECRETS_KEY = randomBytes(32).toString('base64');
const LEASE_MS = 4_000;

interface Service {
  child: ChildProcessWithoutNullStreams;
  url: string;
  stdout(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: ChildProcessWithoutNullStreams[] = [];

async function startService(databaseUrl: string): Promise<Service> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of Object.keys(env)) {
    if (/^(ROLES|DATA_DIR|WORKER_|EXECUTION_|RELAY_|DATABASE_|QUEUE_)/.test(name)) delete env[name];
  }
  Object.assign(env, {
    DATABASE_URL: databaseUrl,
    ADMIN_TOKEN,
    SECRETS_KEY,
    PORT: '0',
    LOG_LEVEL: 'info',
    WORKER_PROCESSES: '2',
    TARGET_ALLOWED_HOSTS: '127.0.0.1',
    EXECUTION_LEASE_MS: String(LEASE_MS),
    EXECUTION_HEARTBEAT_INTERVAL_MS: '1000',
    RELAY_SWEEP_INTERVAL_MS: '200',
    MANAGEMENT_RATE_PER_SECOND: '10000',
    MANAGEMENT_BURST: '10000',
    // Three processes on a Postgres server that other test files share.
    DATABASE_POOL_SIZE: '5',
    QUEUE_POOL_SIZE: '4',
  });
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env });
  started.push(child);
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('exit', (code, signal) => done({ code, signal })),
  );
  // The banner is printed once the children said they consume jobs.
  const port = await eventually(
    () => {
      if (child.exitCode !== null) throw new Error(`exited early:\n${stdout}`);
      const port = listeningPort(stdout);
      expect(port).not.toBeNull();
      return port!;
    },
    { timeoutMs: 90_000, intervalMs: 100 },
  );
  return { child, url: `http://127.0.0.1:${port}`, stdout: () => stdout, exited };
}

/** The worker processes the banner names. */
function bannerPids(service: Service): number[] {
  const match = /worker role in \d+ process\(es\) of its own, pid ([\d, ]+)\)/.exec(
    service.stdout(),
  );
  if (!match) throw new Error(`no worker pool in the banner:\n${service.stdout()}`);
  return match[1].split(',').map((pid) => Number(pid.trim()));
}

async function metric(service: Service, series: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A process's arguments (Linux). */
function commandLine(pid: number): string[] {
  return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
}

/** The process id inside a built-in worker's id (`worker:<host>:<pid>:<random>`). */
function pidOf(workerId: string): number {
  return Number(workerId.split(':')[2]);
}

describe('a service with a worker process pool (WORKER_PROCESSES=2)', () => {
  let database: TestDatabase;
  let db: Client;
  let sink: HttpSink;
  let service: Service;
  let apiKey: string;
  let targetId: string;

  beforeAll(async () => {
    if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: build first (npx nest build)`);
    database = await createTestDatabase();
    db = new Client({ connectionString: database.url });
    await db.connect();
    sink = await HttpSink.start();
  });

  afterAll(async () => {
    for (const child of started) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    await sink?.close();
    await db?.end();
    await database?.drop();
  });

  async function api(path: string, body: unknown, key = apiKey): Promise<any> {
    const res = await fetch(`${service.url}${path}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${key}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
      },
      body: JSON.stringify(body),
    });
    if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  }

  /** `count` one-time schedules due a few seconds from now (one batch request); their ids. */
  async function dueSoon(count: number): Promise<string[]> {
    const runAt = new Date(Date.now() + 3_000).toISOString();
    const items = Array.from({ length: count }, (_, i) => ({
      idempotencyKey: randomUUID(),
      schedule: { name: `s${i}`, targetId, runAt },
    }));
    const res = await fetch(`${service.url}/schedules/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    const answer = (await res.json()) as {
      items: Array<{ status: number; schedule?: { id: string } }>;
    };
    expect(answer.items.map((item) => item.status)).toEqual(items.map(() => 201));
    return answer.items.map((item) => item.schedule!.id);
  }

  async function runsOf(scheduleIds: string[]) {
    const { rows } = await db.query<{
      id: string;
      state: string;
      worker_id: string | null;
      attempt_count: number;
    }>('SELECT id, state, worker_id, attempt_count FROM occurrences WHERE schedule_id = ANY($1)', [
      scheduleIds,
    ]);
    return rows;
  }

  async function attemptWorkers(scheduleIds: string[]): Promise<string[]> {
    const { rows } = await db.query<{ worker_id: string }>(
      `SELECT a.worker_id FROM attempts a JOIN occurrences o ON o.id = a.run_id
        WHERE o.schedule_id = ANY($1)`,
      [scheduleIds],
    );
    return rows.map((row) => row.worker_id);
  }

  async function allSucceeded(scheduleIds: string[], timeoutMs = 30_000): Promise<void> {
    await eventually(
      async () => {
        const runs = await runsOf(scheduleIds);
        expect(runs).toHaveLength(scheduleIds.length);
        expect(runs.filter((run) => run.state !== 'SUCCEEDED')).toEqual([]);
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  it('delivers runs from the worker processes, not the primary, and shows their metrics', async () => {
    service = await startService(database.url);
    const workers = bannerPids(service);
    expect(workers).toHaveLength(2);
    expect(workers).not.toContain(service.child.pid);
    for (const pid of workers) expect(alive(pid)).toBe(true);
    // Worker processes start their young generation at its working size; the primary does not.
    for (const pid of workers) expect(commandLine(pid)).toContain('--min-semi-space-size=16');
    expect(commandLine(service.child.pid!)).not.toContain('--min-semi-space-size=16');

    const tenantRes = await fetch(`${service.url}/tenants`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_TOKEN}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'pool',
        quotas: {
          maxActiveSchedules: 10_000,
          maxConcurrentRuns: 1_000,
          dispatchRatePerSecond: 1_000,
        },
      }),
    });
    expect(tenantRes.status).toBe(201);
    apiKey = ((await tenantRes.json()) as { apiKey: string }).apiKey;
    targetId = (await api('/targets', { name: 'sink', url: sink.url(), deduplicates: true }))
      .id as string;

    const schedules = await dueSoon(40);
    await allSucceeded(schedules);
    const deliveredBy = new Set((await attemptWorkers(schedules)).map(pidOf));
    expect([...deliveredBy].filter((pid) => !workers.includes(pid))).toEqual([]);

    // The primary runs no worker: these series come from its children, summed over IPC.
    expect(await metric(service, 'dueline_worker_processes')).toBe(2);
    expect(await metric(service, 'dueline_role_active{role="worker"}')).toBe(2);
    expect(
      await metric(service, 'dueline_attempts_total{outcome="succeeded"}'),
    ).toBeGreaterThanOrEqual(40);
  });

  it('loses nothing when a worker process is killed, and forks it again', async () => {
    const held = gate();
    sink.behave(async () => {
      await held.promise;
      return { status: 200, body: { ok: true } };
    });
    const schedules = await dueSoon(20);
    // Runs held by a child: their target calls hang until the gate opens.
    const victim = await eventually(
      async () => {
        const running = (await runsOf(schedules)).filter(
          (run) => run.state === 'RUNNING' && run.worker_id,
        );
        expect(running.length).toBeGreaterThan(0);
        return pidOf(running[0].worker_id!);
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const victimRuns = (await runsOf(schedules))
      .filter((run) => run.state === 'RUNNING' && run.worker_id && pidOf(run.worker_id) === victim)
      .map((run) => run.id);
    expect(victimRuns.length).toBeGreaterThan(0);

    process.kill(victim, 'SIGKILL');
    await eventually(() => expect(alive(victim)).toBe(false));
    held.open();

    // The killed child's runs: lease expired, swept, retried (the target deduplicates).
    await allSucceeded(schedules, 60_000);
    const after = await runsOf(schedules);
    for (const run of after.filter((r) => victimRuns.includes(r.id))) {
      expect(run.attempt_count).toBeGreaterThanOrEqual(2);
      expect(pidOf(run.worker_id!)).not.toBe(victim);
    }
    await eventually(
      async () => {
        expect(await metric(service, 'dueline_worker_process_restarts_total')).toBe(1);
        expect(await metric(service, 'dueline_worker_processes')).toBe(2);
      },
      { timeoutMs: 60_000, intervalMs: 250 },
    );
    expect(service.stdout()).toContain('worker process exited unexpectedly; restarting it');
  });

  it('drains the worker processes, then the primary, on SIGTERM; a restart delivers the rest', async () => {
    const held = gate();
    sink.behave(async () => {
      await held.promise;
      return { status: 200, body: { ok: true } };
    });
    const schedules = await dueSoon(20);
    await eventually(
      async () =>
        expect((await runsOf(schedules)).some((run) => run.state === 'RUNNING')).toBe(true),
      { timeoutMs: 30_000, intervalMs: 100 },
    );
    const children = (
      await db.query<{ worker_id: string }>(
        `SELECT DISTINCT worker_id FROM occurrences WHERE state = 'RUNNING' AND worker_id IS NOT NULL`,
      )
    ).rows.map((row) => pidOf(row.worker_id));

    service.child.kill('SIGTERM');
    // The children are draining: their calls in flight may now end.
    await eventually(() => expect(service.stdout()).toMatch(/"why":"SIGTERM"/), {
      timeoutMs: 10_000,
    });
    held.open();
    const { code, signal } = await service.exited;
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    for (const pid of children) expect(alive(pid)).toBe(false);
    expect(service.stdout()).toMatch(/^dueline: stopped$/m);

    // Nothing was left RUNNING; every schedule has its run (done, or released to wait).
    const runs = await runsOf(schedules);
    expect(runs).toHaveLength(schedules.length);
    expect(runs.filter((run) => run.state === 'RUNNING')).toEqual([]);

    sink.behave(() => ({ status: 200, body: { ok: true } }));
    service = await startService(database.url);
    await allSucceeded(schedules, 60_000);
    service.child.kill('SIGTERM');
    expect((await service.exited).code).toBe(0);
  });
});
