import type { DstPolicy } from '../recurrence';
import type { OverlapPolicy } from '../overlap';
import type { RunPriority } from '../run-vocabulary';

export const SCHEDULE_STATUSES = ['active', 'paused', 'cancelled', 'completed'] as const;
export type ScheduleStatus = (typeof SCHEDULE_STATUSES)[number];
export const MISSED_RUN_POLICIES = ['latest', 'skip', 'all'] as const;
export type MissedRunPolicy = (typeof MISSED_RUN_POLICIES)[number];

export interface RetryPolicy {
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
  retryDeadlineSeconds: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 3,
  initialDelayMs: 1000,
  maxDelayMs: 300_000,
  retryDeadlineSeconds: 3600,
};

/** When a schedule fires: once at an instant, or on a cron expression in a timezone. */
export type Timing =
  | { kind: 'once'; runAt: Date }
  | { kind: 'cron'; cron: string; timezone: string; dstPolicy: DstPolicy };

/** Everything a tenant defines about a schedule (what an edit may change). */
export interface ScheduleDefinition {
  name: string;
  targetId: string;
  payload: Record<string, unknown>;
  timing: Timing;
  startAt: Date | null;
  endAt: Date | null;
  missedRunPolicy: MissedRunPolicy;
  maxCatchUp: number;
  overlapPolicy: OverlapPolicy;
  retryPolicy: RetryPolicy;
  /** Waiting runs of a `high` schedule are admitted first, and may use the reserved share. */
  priority: RunPriority;
  /** A run that cannot start within this bound of its instant is SKIPPED (null: no deadline). */
  startDeadlineSeconds: number | null;
  /**
   * Each run fires at a planned instant within this many seconds after its nominal one (0:
   * exactly at it); see plannedFireAt. Shorter than the gap between two runs of a cron.
   */
  flexibleWindowSeconds: number;
}

export interface Schedule extends ScheduleDefinition {
  id: string;
  tenantId: string;
  revision: number;
  status: ScheduleStatus;
  nextDueAt: Date | null;
  /** The create's span, when it was traced. */
  traceParent: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Statuses that still count against maxActiveSchedules and may still fire. */
export const LIVE_STATUSES: readonly ScheduleStatus[] = ['active', 'paused'];
