import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { unusedListenPort } from '../../src/common';
import { eventually } from '../support/eventually';

const ROOT = resolve(__dirname, '../..');
export const MAIN = join(ROOT, 'dist/src/main.js');
export const ADMIN_TOKEN = 'failover-admin-token-0123456789';
/** Secrets at rest are sealed with it (required with DATABASE_URL). */
export const SECRETS_KEY = Buffer.alloc(32, 0x2f).toString('base64');

/** A dueline process (`node dist/src/main.js`), as an operator runs one replica. */
export class Replica {
  private exitedWith: string | null = null;

  private constructor(
    readonly name: string,
    readonly port: number,
    private readonly child: ChildProcess,
    private readonly logPath: string,
  ) {
    child.once('exit', (code, signal) => (this.exitedWith = `${code ?? signal}`));
  }

  static async start(name: string, env: Record<string, string>, logDir: string): Promise<Replica> {
    const port = await unusedListenPort();
    const logPath = join(logDir, `${name}.log`);
    const log = createWriteStream(logPath);
    const child = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        ADMIN_TOKEN,
        SECRETS_KEY,
        TARGET_ALLOWED_HOSTS: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...env,
        PORT: String(port),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    const replica = new Replica(name, port, child, logPath);
    await eventually(
      async () => {
        if (replica.exitedWith !== null) {
          throw new Error(`${name} exited (${replica.exitedWith}); see ${logDir}/${name}.log`);
        }
        const res = await fetch(`${replica.url}/health/ready`);
        if (res.status !== 200) throw new Error(`${name} is not ready (${res.status})`);
      },
      { timeoutMs: 60_000, intervalMs: 200, until: () => replica.exitedWith !== null },
    );
    return replica;
  }

  /** How the process ended, if it did (a replica must survive the failover). */
  exitStatus(): string | null {
    return this.exitedWith;
  }

  /** The end of what the process printed (to explain an exit it should not have made). */
  logTail(lines = 40): string {
    try {
      return readFileSync(this.logPath, 'utf8').split('\n').slice(-lines).join('\n');
    } catch {
      return '(no log)';
    }
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** SIGTERM, then the process's own bounded drain. */
  async stop(): Promise<void> {
    if (this.exitedWith !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.kill('SIGTERM');
    const killer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(killer);
  }
}
