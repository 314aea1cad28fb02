import { randomUUID } from 'node:crypto';
import { lagStats, type LagStats } from './analysis';
import type { Tenant } from './api-client';

const DAY_MS = 86_400_000;

/**
 * Cron expressions and timezones of the created schedules: a bulk import shares a handful of
 * recurrences (daily reports, weekday reminders…) and differs in name, payload and instant.
 */
const CRONS = [
  '0 9 * * *',
  '30 17 * * 1-5',
  '*/15 * * * *',
  '0 0 1 * *',
  '0 */6 * * *',
  '45 7 * * 6,0',
  '0 12 * * 3',
  '15 3 * * *',
];
const TIMEZONES = ['UTC', 'Europe/Berlin', 'America/New_York', 'Asia/Tokyo'];

/**
 * The i-th schedule a client creates: every other one a one-time job at a random millisecond
 * 1 to 300 days ahead, the rest cron schedules from the lists above; each with a small payload.
 * Nothing comes due during a run, so only creation is measured.
 */
export function scheduleBody(targetId: string, i: number): Record<string, unknown> {
  const common = { name: `bench-${i}`, targetId, payload: { customer: i, kind: 'bench' } };
  if (i % 2 === 0) {
    const runAt = new Date(Date.now() + DAY_MS + Math.random() * 299 * DAY_MS);
    return { ...common, runAt: runAt.toISOString() };
  }
  const n = (i - 1) / 2;
  return {
    ...common,
    cron: CRONS[n % CRONS.length],
    timezone: TIMEZONES[Math.floor(n / CRONS.length) % TIMEZONES.length],
  };
}

export interface LoadFigures {
  /** Requests answered as expected. */
  ok: number;
  failed: number;
  firstError: string | null;
  seconds: number;
  requestsPerSecond: number;
  latencyMs: LagStats | null;
  /** Schedules created per second (a batch request creates many). */
  schedulesPerSecond: number;
}

/** What one window of load recorded. */
export interface LoadSample {
  latencies: number[];
  failed: number;
  firstError: string | null;
  seconds: number;
  created: number;
}

/** One request of a load: resolves to the schedules it created, or throws the answer. */
export type Send = (client: number, sequence: number) => Promise<number>;

/**
 * `clients` loops, each sending its next request as soon as the previous one is answered, for
 * `seconds`. Latency is from send to the last byte of the answer; throughput counts only the
 * requests that were answered as expected, over the time until the last one was.
 */
export async function closedLoop(
  clients: number,
  seconds: number,
  send: Send,
): Promise<LoadSample> {
  const sample: LoadSample = { latencies: [], failed: 0, firstError: null, seconds: 0, created: 0 };
  const started = performance.now();
  const deadline = started + seconds * 1000;
  let sequence = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, client) => {
      while (performance.now() < deadline) {
        const sent = performance.now();
        try {
          const created = await send(client, sequence++);
          sample.created += created;
          sample.latencies.push(performance.now() - sent);
        } catch (error) {
          sample.failed++;
          sample.firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  sample.seconds = (performance.now() - started) / 1000;
  return sample;
}

/** The figures of one or more windows of the same load (e.g. rounds alternating tenants). */
export function figuresOf(samples: readonly LoadSample[]): LoadFigures {
  const seconds = samples.reduce((s, p) => s + p.seconds, 0);
  const ok = samples.reduce((s, p) => s + p.latencies.length, 0);
  return {
    ok,
    failed: samples.reduce((s, p) => s + p.failed, 0),
    firstError: samples.find((p) => p.firstError)?.firstError ?? null,
    seconds: round(seconds),
    requestsPerSecond: round(ok / seconds),
    latencyMs: lagStats(samples.flatMap((p) => p.latencies)),
    schedulesPerSecond: round(samples.reduce((s, p) => s + p.created, 0) / seconds),
  };
}

/** POST /schedules for one tenant, a fresh Idempotency-Key per call; 201 is the only success. */
export function singleCreate(baseUrl: string, tenant: Tenant): Send {
  return async (_client, sequence) => {
    const res = await fetch(`${baseUrl}/schedules`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${tenant.apiKey}`,
        'Content-Type': 'application/json',
        'Idempotency-Key': randomUUID(),
      },
      body: JSON.stringify(scheduleBody(tenant.targetId, sequence)),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`POST /schedules ${res.status}: ${text.slice(0, 300)}`);
    return 1;
  };
}

/** POST /schedules/batch of `size` items; every item must answer 201. */
export function batchCreate(baseUrl: string, tenant: Tenant, size: number): Send {
  return async (_client, sequence) => {
    const items = Array.from({ length: size }, (_, i) => ({
      idempotencyKey: randomUUID(),
      schedule: scheduleBody(tenant.targetId, sequence * size + i),
    }));
    const res = await fetch(`${baseUrl}/schedules/batch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ items }),
    });
    const text = await res.text();
    if (res.status !== 200)
      throw new Error(`POST /schedules/batch ${res.status}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { items: Array<{ status: number; problem?: unknown }> };
    const refused = body.items.filter((item) => item.status !== 201);
    if (refused.length > 0) {
      throw new Error(
        `POST /schedules/batch: ${refused.length} item(s) refused, e.g. ${JSON.stringify(refused[0]).slice(0, 300)}`,
      );
    }
    return body.items.length;
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
