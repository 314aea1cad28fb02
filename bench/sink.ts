import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the target received it. */
export interface Receipt {
  /** Which system sent it: the path segment after /hook/ (ours, pgboss, bullmq). */
  system: string;
  runId: string;
  attempt: number;
  scheduleId: string;
  /** Epoch ms of the nominal instant the sender says this run is for. */
  scheduledAt: number;
  /** Epoch ms (fractional) when the request's headers arrived. */
  receivedAt: number;
}

/**
 * The HTTP target every system under test calls: a server on 127.0.0.1 that stamps each request
 * when its headers arrive (before the body, so a slow body read does not count as dispatch lag)
 * and answers 200 at once, or, on a slow URL (`/hook/<system>/slow/<ms>`, see `url`), after that
 * many milliseconds: a target that keeps the caller's slot busy per call. The receipt is still
 * stamped when the headers arrive, so lag means the same on both. Identity comes from the dueline contract: headers X-Dueline-Run-Id,
 * X-Dueline-Attempt and X-Dueline-Scheduled-At, and `scheduleId` from the JSON body. The peers'
 * runners send the same shape.
 */
export class Sink {
  private receipts: Receipt[] = [];
  private malformed = 0;
  private listeners: Array<(receipt: Receipt) => void> = [];

  private constructor(private readonly server: Server) {}

  static async start(): Promise<Sink> {
    const server = createServer({ keepAliveTimeout: 30_000 });
    const sink = new Sink(server);
    server.on('request', (req, res) => sink.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  /** The target URL for `system`; with `answerAfterMs` it answers that much later (a slow target). */
  url(system: string, answerAfterMs = 0): string {
    const { port } = this.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}/hook/${system}`;
    return answerAfterMs > 0 ? `${base}/slow/${Math.round(answerAfterMs)}` : base;
  }

  /** Starts a new recording (a new scenario), returning the previous one. */
  reset(): Receipt[] {
    const previous = this.receipts;
    this.receipts = [];
    this.malformed = 0;
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
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const receivedAt = performance.timeOrigin + performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const answer = () => {
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': '2' });
        res.end('{}');
      };
      const delay = answerDelayMs(req.url);
      if (delay > 0) setTimeout(answer, delay);
      else answer();
      const receipt = this.parse(req, Buffer.concat(chunks).toString('utf8'), receivedAt);
      if (!receipt) {
        this.malformed++;
        return;
      }
      this.receipts.push(receipt);
      for (const listener of this.listeners) listener(receipt);
    });
  }

  private parse(req: IncomingMessage, raw: string, receivedAt: number): Receipt | null {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const runId = header('x-dueline-run-id');
    const attempt = Number(header('x-dueline-attempt'));
    const scheduledAt = Date.parse(header('x-dueline-scheduled-at') ?? '');
    let scheduleId: unknown;
    try {
      scheduleId = (JSON.parse(raw) as { scheduleId?: unknown }).scheduleId;
    } catch {
      return null;
    }
    if (!runId || !Number.isFinite(attempt) || Number.isNaN(scheduledAt)) return null;
    if (typeof scheduleId !== 'string') return null;
    const system = (req.url ?? '').split('/')[2] ?? 'unknown';
    return { system, runId, attempt, scheduleId, scheduledAt, receivedAt };
  }
}

/** How long a request to `url` waits for its answer: `/hook/<system>/slow/<ms>`, else 0. */
function answerDelayMs(url: string | undefined): number {
  const [, , , mode, ms] = (url ?? '').split('/');
  if (mode !== 'slow') return 0;
  const delay = Number(ms);
  return Number.isFinite(delay) && delay > 0 ? Math.min(delay, 60_000) : 0;
}
