import { ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { BUILD_ROOT, trackChild } from '../service';

/** A peer runner (pgboss-runner.js, bullmq-runner.js) as a child process, metered like a replica. */
export class PeerProcess {
  private output: string[] = [];
  private exited: Promise<void>;
  private done = false;

  private constructor(
    readonly name: string,
    private readonly child: ChildProcess,
  ) {
    this.exited = new Promise((resolve) =>
      child.once('exit', () => {
        this.done = true;
        resolve();
      }),
    );
    const keep = (chunk: string) => {
      this.output.push(...chunk.split('\n').filter(Boolean));
      if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
    };
    child.stdout?.setEncoding('utf8').on('data', keep);
    child.stderr?.setEncoding('utf8').on('data', keep);
  }

  static async start(
    name: string,
    script: string,
    env: Record<string, string>,
  ): Promise<PeerProcess> {
    const child = spawn(process.execPath, [join(BUILD_ROOT, 'bench', 'peers', script)], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    trackChild(child);
    const peer = new PeerProcess(name, child);
    const deadline = Date.now() + 120_000;
    while (!peer.output.includes('READY')) {
      if (peer.done || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not start:\n${peer.output.slice(-20).join('\n')}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return peer;
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Output lines other than READY (errors the runner printed). */
  messages(): string[] {
    return this.output.filter((line) => line !== 'READY');
  }

  async stop(): Promise<void> {
    if (this.done) return;
    this.child.kill('SIGTERM');
    await Promise.race([this.exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
    if (!this.done) this.child.kill('SIGKILL');
    await this.exited;
  }
}
