import type { RunPriority, RunReason, RunState } from '../run-vocabulary';

/** A run as the poller (or a manual trigger) creates it. */
export interface NewOccurrence {
  tenantId: string;
  scheduleId: string;
  revision: number;
  scheduledAt: Date;
  scheduledLocal: string;
  /** FAILED only for a run whose target admission found disabled (target_gone). */
  state: 'QUEUED' | 'SKIPPED' | 'FAILED';
  reason: RunReason | null;
  /** Created admitted (its permit and token taken in the same transaction): see admission. */
  admitted?: boolean;
  trigger: RunTrigger;
  maxAttempts: number;
  retryDeadlineSeconds: number;
  priority: RunPriority;
  /** Seconds after its instant past which it is SKIPPED rather than started (null: none). */
  startDeadlineSeconds: number | null;
  /** When it may start: its planned fire instant (absent: its nominal instant). */
  firesAt?: Date;
  coalescedCount?: number;
  coalescedFirst?: Date | null;
  coalescedLast?: Date | null;
  /** The identity's fourth part (see OccurrenceEntity.originKey); '' when absent. */
  originKey?: string;
  /** Idempotency-Key of its attempts when not its own id (a replay keeps its original's). */
  idempotencyKey?: string | null;
  replayOf?: string | null;
  /** The W3C traceparent of the span that created it: the root of the run's trace. */
  traceParent?: string | null;
}

export const RUN_TRIGGERS = ['schedule', 'manual', 'replay', 'backfill'] as const;
/**
 * What created a run: the poller at its instant, POST /schedules/{id}/trigger, a replay of a
 * FAILED or UNKNOWN run (POST /runs/replay), or a backfill of past instants.
 */
export type RunTrigger = (typeof RUN_TRIGGERS)[number];

/** An occurrence the ledger insert created (a conflict is another poller's win: no row). */
export interface InsertedOccurrence {
  id: string;
  tenantId: string;
  scheduleId: string;
  state: NewOccurrence['state'];
  scheduledAt: Date;
  originKey: string;
}

/** The filters of GET /runs (each optional; all given must hold). */
export interface RunFilter {
  state?: RunState;
  reason?: RunReason;
  scheduleId?: string;
  targetId?: string;
  trigger?: RunTrigger;
  scheduledFrom?: Date;
  scheduledTo?: Date;
  finishedFrom?: Date;
  finishedTo?: Date;
  ids?: string[];
}
