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

/** What the server reports of each request: a receipt, or that it could not be read as one. */
export interface SinkEvents {
  receipt(receipt: Receipt): void;
  malformed(receivedAt: number): void;
}

/**
 * The HTTP target every system under test calls: a server on 127.0.0.1 that stamps each request
 * when its headers arrive (before the body, so a slow body read does not count as dispatch lag)
 * and answers 200 at once, or, on a slow URL (`/hook/<system>/slow/<ms>`), after that many
 * milliseconds: a target that keeps the caller's slot busy per call. The receipt is still
 * stamped when the headers arrive, so lag means the same on both. Identity comes from the
 * dueline contract: headers X-Dueline-Run-Id, X-Dueline-Attempt and X-Dueline-Scheduled-At, and
 * `scheduleId` from the JSON body. The peers' runners send the same shape.
 */
export async function startSinkServer(
  events: SinkEvents,
): Promise<{ server: Server; port: number }> {
  const server = createServer({ keepAliveTimeout: 30_000 });
  server.on('request', (req, res) => handle(req, res, events));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

function handle(req: IncomingMessage, res: ServerResponse, events: SinkEvents): void {
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
    const receipt = parse(req, Buffer.concat(chunks).toString('utf8'), receivedAt);
    if (receipt) events.receipt(receipt);
    else events.malformed(receivedAt);
  });
}

function parse(req: IncomingMessage, raw: string, receivedAt: number): Receipt | null {
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

/** How long a request to `url` waits for its answer: `/hook/<system>/slow/<ms>`, else 0. */
function answerDelayMs(url: string | undefined): number {
  const [, , , mode, ms] = (url ?? '').split('/');
  if (mode !== 'slow') return 0;
  const delay = Number(ms);
  return Number.isFinite(delay) && delay > 0 ? Math.min(delay, 60_000) : 0;
}
