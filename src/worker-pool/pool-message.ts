import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { HandoffRoom } from '../handoff';
import type { HandedOffJob } from '../queue';

/** One process's metrics as prom-client's `getMetricsAsJSON()` gives them (aggregatable). */
export type ProcessMetrics = Array<MetricObjectWithValues<MetricValue<string>>>;

/**
 * What the primary and its worker processes tell each other over the IPC channel. A child says
 * `ready` once its worker role consumes jobs; the primary asks it for its metrics
 * (`metrics.request`, answered by `metrics.reply`). The primary's poller hands a child runs
 * (`handoff.jobs`, see handoff/) while the child's last `handoff.room` says it has room for them.
 * Stopping is a signal (SIGTERM), not a message, so it works whether or not the channel still
 * does.
 */
export const POOL_MESSAGE_KINDS = [
  'ready',
  'metrics.request',
  'metrics.reply',
  'handoff.jobs',
  'handoff.room',
] as const;
export type PoolMessageKind = (typeof POOL_MESSAGE_KINDS)[number];

export type PoolMessage =
  | { kind: 'ready'; workerId: string }
  | { kind: 'metrics.request'; id: number }
  | { kind: 'metrics.reply'; id: number; metrics: ProcessMetrics }
  | { kind: 'handoff.jobs'; jobs: readonly HandedOffJob[] }
  | { kind: 'handoff.room'; room: HandoffRoom };

/** The command-line flag that makes `main` a pool child instead of a primary. */
export const WORKER_PROCESS_FLAG = '--worker-process';

export function isPoolMessage(value: unknown): value is PoolMessage {
  return (
    typeof value === 'object' &&
    value !== null &&
    (POOL_MESSAGE_KINDS as readonly unknown[]).includes((value as { kind?: unknown }).kind)
  );
}
