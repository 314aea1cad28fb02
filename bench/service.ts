import { ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { unusedListenPort } from '../src/common';

/** The compiled tree: this file is <out>/bench/service.js, the service is <out>/src/main.js. */
export const BUILD_ROOT = resolve(__dirname, '..');
/**
 * The service entry point; BENCH_SERVICE_MAIN points at another build (e.g. a patched checkout's
 * dist/src/main.js) to compare two versions under the same harness.
 */
export const SERVICE_MAIN = process.env.BENCH_SERVICE_MAIN || join(BUILD_ROOT, 'src', 'main.js');

export const ADMIN_TOKEN = `bench-admin-${randomBytes(12).toString('hex')}`;

/** Settings every replica gets; MANAGEMENT_* are raised so seeding through the API is not throttled. */
const BASE_ENV: Record<string, string> = {
  ADMIN_TOKEN,
  SECRETS_KEY: randomBytes(32).toString('base64'),
  TARGET_ALLOWED_HOSTS: '127.0.0.1',
  LOG_LEVEL: 'warn',
  MANAGEMENT_RATE_PER_SECOND: '100000',
  MANAGEMENT_BURST: '100000',
};

const OUTPUT_LINES_KEPT = 200;

/**
 * Node.js options for the service's processes, from BENCH_SERVICE_NODE_ARGS (e.g.
 * "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile the replicas: see bench:profile).
 */
export function serviceNodeArgs(): string[] {
  return (process.env.BENCH_SERVICE_NODE_ARGS ?? '').split(' ').filter(Boolean);
}

/** Every child this process started, so an interrupted bench leaves nothing running behind it. */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

export function trackChild(child: ChildProcess): void {
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of liveChildren) c.kill('SIGKILL');
  });
}

/**
 * One `node src/main.js` replica as a child process with the given roles: the real entry point,
 * so boot, migrations under the advisory lock, role wiring and shutdown are what production runs.
 */
export class ServiceProcess {
  private output: string[] = [];
  private exitStatus: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exited: Promise<void>;
  /** Log lines at warn or above (pino levels 40+), counted for the report. */
  warnings = 0;
  errors = 0;
  private readonly firstErrors: string[] = [];

  private constructor(
    readonly name: string,
    readonly roles: string,
    readonly port: number,
    private readonly child: ChildProcess,
  ) {
    // e.g. BENCH_SERVICE_LOG_DIR=/tmp/logs to keep each replica's whole output (warn and up).
    const logDir = process.env.BENCH_SERVICE_LOG_DIR;
    const logFile = logDir ? join(logDir, `${name}-${child.pid}.log`) : null;
    if (logDir) mkdirSync(logDir, { recursive: true });
    const keep = (chunk: string) => {
      if (logFile) appendFileSync(logFile, chunk);
      for (const line of chunk.split('\n')) {
        if (!line) continue;
        this.count(line);
        this.output.push(line);
        if (this.output.length > OUTPUT_LINES_KEPT) this.output.shift();
      }
    };
    child.stdout?.setEncoding('utf8').on('data', keep);
    child.stderr?.setEncoding('utf8').on('data', keep);
    this.exited = new Promise((done) =>
      child.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        done();
      }),
    );
  }

  static async start(
    name: string,
    databaseUrl: string,
    roles: string,
    extraEnv: Record<string, string> = {},
  ): Promise<ServiceProcess> {
    const port = await unusedListenPort();
    const env: NodeJS.ProcessEnv = { ...process.env };
    // A developer's settings must not leak into the replica (DATA_DIR, LOG_LEVEL, ROLES…).
    for (const key of Object.keys(env)) {
      if (/^(DATA_DIR|ROLES|LOG_LEVEL|PORT|POLLER_|SHUTDOWN_)/.test(key)) delete env[key];
    }
    Object.assign(env, BASE_ENV, { DATABASE_URL: databaseUrl, PORT: String(port), ROLES: roles });
    Object.assign(env, extraEnv);
    const child = spawn(process.execPath, [...serviceNodeArgs(), SERVICE_MAIN], {
      cwd: process.cwd(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    const service = new ServiceProcess(name, roles, port, child);
    await service.waitReady(60_000);
    return service;
  }

  get pid(): number {
    return this.child.pid!;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get alive(): boolean {
    return this.exitStatus === null;
  }

  /** The first few error-level log lines (kept apart from the rolling tail). */
  errorLines(): string[] {
    return [...this.firstErrors];
  }

  tail(lines = 20): string[] {
    return this.output.slice(-lines);
  }

  /** SIGTERM and wait for the drain (bounded), then SIGKILL if it is still there. */
  async stop(timeoutMs = 20_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGTERM');
    const timer = new Promise<void>((done) => setTimeout(done, timeoutMs).unref());
    await Promise.race([this.exited, timer]);
    if (this.alive) {
      this.child.kill('SIGKILL');
      await this.exited;
    }
  }

  async kill(): Promise<void> {
    if (!this.alive) return;
    this.child.kill('SIGKILL');
    await this.exited;
  }

  private count(line: string): void {
    if (!line.startsWith('{')) return;
    const level = /"level":(\d+)/.exec(line);
    if (!level) return;
    if (Number(level[1]) >= 50) {
      this.errors++;
      if (this.firstErrors.length < 10) this.firstErrors.push(line);
    } else if (Number(level[1]) >= 40) this.warnings++;
  }

  private async waitReady(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (!this.alive) {
        throw new Error(
          `${this.name} exited before it was ready (${JSON.stringify(this.exitStatus)}):\n` +
            this.tail(30).join('\n'),
        );
      }
      const status = await fetch(`${this.url}/health/ready`).then(
        (res) => res.status,
        () => null,
      );
      if (status === 200) return;
      if (Date.now() >= deadline) {
        await this.kill();
        throw new Error(
          `${this.name} not ready within ${timeoutMs} ms:\n${this.tail(30).join('\n')}`,
        );
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  }
}

/** Stops every replica still running (used on the way out, also after a failure). */
export async function stopAll(services: readonly ServiceProcess[]): Promise<void> {
  await Promise.all(services.map((s) => s.stop()));
}
