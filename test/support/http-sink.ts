import { createServer, IncomingHttpHeaders, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as a target received it. */
export interface SinkRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  raw: string;
  body: any;
  /** Order of arrival, from 0. */
  index: number;
}

/**
 * What the target does with a request: answer it, or read it and then drop the connection
 * without a response (the request landed, the answer is lost).
 */
export type SinkReply =
  { status: number; body?: unknown; headers?: Record<string, string> } | { destroy: true };

export type SinkBehaviour = (request: SinkRequest) => SinkReply | Promise<SinkReply>;

/** A gate a behaviour can wait on, to hold requests until the test opens it. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/**
 * A local HTTP target on 127.0.0.1 that records every request and answers as the test says
 * (200 by default). Runs with TARGET_ALLOWED_HOSTS=127.0.0.1.
 */
export class HttpSink {
  readonly requests: SinkRequest[] = [];
  /** Requests whose connection closed before the sink answered (aborted by the caller). */
  readonly aborted: SinkRequest[] = [];
  private behaviour: SinkBehaviour = () => ({ status: 200, body: { ok: true } });

  private constructor(private readonly server: Server) {}

  static async start(): Promise<HttpSink> {
    const server = createServer();
    const sink = new HttpSink(server);
    server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        let body: unknown;
        try {
          body = JSON.parse(raw);
        } catch {
          body = null;
        }
        const request: SinkRequest = {
          method: req.method ?? '',
          path: req.url ?? '',
          headers: req.headers,
          raw,
          body,
          index: sink.requests.length,
        };
        sink.requests.push(request);
        void sink.answer(request, res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return sink;
  }

  /** The URL a target registration should use. */
  url(path = '/hook'): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://127.0.0.1:${port}${path}`;
  }

  behave(behaviour: SinkBehaviour): void {
    this.behaviour = behaviour;
  }

  /** Requests carrying this Idempotency-Key (i.e. for this run), in arrival order. */
  forRun(runId: string): SinkRequest[] {
    return this.requests.filter((r) => r.headers['idempotency-key'] === runId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async answer(request: SinkRequest, res: ServerResponse): Promise<void> {
    let answered = false;
    res.on('close', () => {
      if (!answered) this.aborted.push(request);
    });
    const reply = await this.behaviour(request);
    answered = true;
    if (res.destroyed) return;
    if ('destroy' in reply) {
      res.socket?.destroy();
      return;
    }
    res.writeHead(reply.status, { 'Content-Type': 'application/json', ...reply.headers });
    res.end(reply.body === undefined ? '' : JSON.stringify(reply.body));
  }
}
