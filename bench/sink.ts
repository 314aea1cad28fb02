import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Receipt } from './sink-server';

export type { Receipt } from './sink-server';

/** What the sink's thread tells the bench. */
export type SinkMessage =
  | { kind: 'listening'; port: number }
  | { kind: 'receipt'; receipt: Receipt }
  | { kind: 'malformed'; receivedAt: number }
  | { kind: 'closed' };

/** What the bench tells the sink's thread. */
export type SinkCommand = { kind: 'close' };

/**
 * The target every system under test calls (sink-server.ts), run on a worker thread of its own
 * (sink-thread.ts) and recorded here. The server stamps each request on that thread: the bench's
 * main thread blocks for tens of milliseconds at times (the resource meter's /proc reads took
 * 22 ms a second on average and up to 58 ms beside a flood, measured on 2 cores), and a stamp
 * taken on it was late by as much, for every request that came in meanwhile. Receipts reach
 * this side a moment after their stamp; `reset()` keeps out any stamped before it.
 */
export class Sink {
  private receipts: Receipt[] = [];
  private malformed = 0;
  private listeners: Array<(receipt: Receipt) => void> = [];
  /** Receipts stamped before this instant (epoch ms) belong to the previous recording. */
  private recordingFrom = 0;

  private constructor(
    private readonly thread: Worker,
    private readonly port: number,
  ) {
    thread.on('message', (message: SinkMessage) => this.take(message));
  }

  static async start(): Promise<Sink> {
    const thread = new Worker(join(__dirname, 'sink-thread.js'));
    const port = await new Promise<number>((resolve, reject) => {
      const onMessage = (message: SinkMessage) => {
        if (message.kind !== 'listening') return;
        thread.off('message', onMessage);
        thread.off('error', reject);
        resolve(message.port);
      };
      thread.on('message', onMessage);
      thread.once('error', reject);
    });
    thread.on('error', (error) => console.error(`!! the sink's thread failed: ${error.message}`));
    thread.unref();
    return new Sink(thread, port);
  }

  /** The target URL for `system`; with `answerAfterMs` it answers that much later (a slow target). */
  url(system: string, answerAfterMs = 0): string {
    const base = `http://127.0.0.1:${this.port}/hook/${system}`;
    return answerAfterMs > 0 ? `${base}/slow/${Math.round(answerAfterMs)}` : base;
  }

  /** Starts a new recording (a new scenario), returning the previous one. */
  reset(): Receipt[] {
    const previous = this.receipts;
    this.receipts = [];
    this.malformed = 0;
    this.recordingFrom = performance.timeOrigin + performance.now();
    return previous;
  }

  all(): readonly Receipt[] {
    return this.receipts;
  }

  count(): number {
    return this.receipts.length;
  }

  malformedCount(): number {
    return this.malformed;
  }

  onReceipt(listener: (receipt: Receipt) => void): () => void {
    this.listeners.push(listener);
    return () => (this.listeners = this.listeners.filter((l) => l !== listener));
  }

  async close(): Promise<void> {
    if (this.thread.threadId === -1) return; // the thread has ended already (it failed)
    // Its server closed, or the thread gone meanwhile: either way nothing listens.
    const closed = new Promise<void>((resolve) => {
      this.thread.on('message', (message: SinkMessage) => {
        if (message.kind === 'closed') resolve();
      });
      this.thread.once('exit', () => resolve());
    });
    this.thread.postMessage({ kind: 'close' } satisfies SinkCommand);
    await closed;
    await this.thread.terminate();
  }

  private take(message: SinkMessage): void {
    if (message.kind === 'malformed') {
      if (message.receivedAt >= this.recordingFrom) this.malformed++;
      return;
    }
    if (message.kind !== 'receipt') return;
    const { receipt } = message;
    if (receipt.receivedAt < this.recordingFrom) return;
    this.receipts.push(receipt);
    for (const listener of this.listeners) listener(receipt);
  }
}
