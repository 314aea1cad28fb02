import { randomUUID } from 'node:crypto';
import type { Replica } from './replicas';

/** One create as the client saw it. */
export interface CreateAnswer {
  key: string;
  status: number | 'no-answer';
  retryAfter: string | null;
  contentType: string | null;
  scheduleId: string | null;
  runAt: string;
  sentAt: number;
  /** How long the answer took (or the failure came). */
  tookMs: number;
  /** Why there was no answer. */
  failure?: string;
  /** The fields a 400 problem named. */
  invalidFields?: string[];
  /** Any other problem's title and detail (what a 500 said, should one come). */
  problem?: string;
}

/**
 * Concurrent creates of one-time schedules due 1.5-3 s ahead, spread over the replicas' APIs, as
 * a steady client would send them while the formation fails over. Bounded: it stops when told,
 * or after `maxMs` whatever happens, and each request after `requestTimeoutMs`.
 */
export class CreateLoad {
  readonly answers: CreateAnswer[] = [];
  private running = true;
  private readonly loops: Promise<void>[];

  constructor(
    replicas: readonly Replica[],
    apiKey: string,
    targetId: string,
    {
      concurrency = 4,
      pauseMs = 400,
      maxMs = 180_000,
      requestTimeoutMs = 15_000,
    }: { concurrency?: number; pauseMs?: number; maxMs?: number; requestTimeoutMs?: number } = {},
  ) {
    const until = Date.now() + maxMs;
    this.loops = Array.from({ length: concurrency }, async (_, loop) => {
      for (let i = 0; this.running && Date.now() < until; i++) {
        const replica = replicas[(loop + i) % replicas.length];
        const runAt = new Date(Date.now() + 1500 + Math.floor(Math.random() * 1500)).toISOString();
        const key = randomUUID();
        const sentAt = Date.now();
        let answer: CreateAnswer;
        try {
          const res = await fetch(`${replica.url}/schedules`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${apiKey}`,
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: JSON.stringify({ name: `one-time-${loop}-${i}`, targetId, runAt }),
            signal: AbortSignal.timeout(requestTimeoutMs),
          });
          const body = (await res.json().catch(() => null)) as {
            id?: string;
            errors?: Array<{ field: string }>;
            title?: string;
            detail?: string;
          } | null;
          answer = {
            key,
            status: res.status,
            retryAfter: res.headers.get('retry-after'),
            contentType: res.headers.get('content-type'),
            scheduleId: res.status === 201 ? (body?.id ?? null) : null,
            runAt,
            sentAt,
            tookMs: Date.now() - sentAt,
            ...(body?.errors ? { invalidFields: body.errors.map((e) => e.field) } : {}),
            ...(res.status >= 500 && res.status !== 503
              ? { problem: `${body?.title ?? '?'}: ${body?.detail ?? ''}` }
              : {}),
          };
        } catch (error) {
          const e = error as Error & { cause?: { code?: string; message?: string } };
          answer = {
            tookMs: Date.now() - sentAt,
            failure: `${e.name}: ${e.message}${e.cause ? ` (${e.cause.code ?? e.cause.message})` : ''}`,
            key,
            status: 'no-answer',
            retryAfter: null,
            contentType: null,
            scheduleId: null,
            runAt,
            sentAt,
          };
        }
        this.answers.push(answer);
        await new Promise((done) => setTimeout(done, pauseMs));
      }
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }
}

/** A readiness probe every 200 ms, so the test can say what /health/ready answered when. */
export class ReadinessWatch {
  readonly seen: Array<{ at: number; status: number | 'no-answer' }> = [];
  private running = true;
  private readonly loop: Promise<void>;

  constructor(replica: Replica, maxMs = 180_000) {
    const until = Date.now() + maxMs;
    this.loop = (async () => {
      while (this.running && Date.now() < until) {
        const at = Date.now();
        const status = await fetch(`${replica.url}/health/ready`, {
          signal: AbortSignal.timeout(10_000),
        }).then(
          (res) => res.status,
          () => 'no-answer' as const,
        );
        this.seen.push({ at, status });
        await new Promise((done) => setTimeout(done, 200));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}
