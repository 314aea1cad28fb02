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

/**
 * When a schedule fires: once at an instant, on a cron expression in a timezone, or every fixed
 * interval from an anchor instant (the timezone shows local times and decides excluded dates).
 */
export type Timing =
  | { kind: 'once'; runAt: Date }
  | { kind: 'cron'; cron: string; timezone: string; dstPolicy: DstPolicy }
  | { kind: 'interval'; everySeconds: number; anchorAt: Date; timezone: string };

export type RecurringTiming = Exclude<Timing, { kind: 'once' }>;

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
  /** Key/value labels, filterable in GET /schedules?label=key:value. */
  labels: Record<string, string>;
  /** Local dates (YYYY-MM-DD) given on the schedule itself on which nothing runs. */
  excludeDates: string[];
  /** A named calendar of the tenant whose dates are excluded instead (xor excludeDates). */
  calendarId: string | null;
  /**
   * The dates actually excluded: excludeDates, or the calendar's (calendars never change, so
   * the copy taken when the schedule was written is the calendar).
   */
  excludedDates: string[];
  /** The schedule completes once it has created this many runs (null: no limit). */
  maxRuns: number | null;
  /** Paused by dueline after this many consecutive runs end FAILED or UNKNOWN (null: never). */
  pauseAfterConsecutiveFailures: number | null;
  /**
   * A run that starts (is claimed) more than this many seconds after its planned fire instant
   * is late: a `run.late` event for subscribers (null: no late events).
   */
  lateAfterSeconds: number | null;
  /**
   * Each run fires at a planned instant within this many seconds after its nominal one (0:
   * exactly at it); see plannedFireAt. Shorter than the gap between two runs of a cron.
   */
  flexibleWindowSeconds: number;
}

/** Why a schedule is paused: a machine code beside the free-text note. */
export const PAUSE_REASONS = {
  paused_by_request: 'PATCH status paused',
  consecutive_failures: 'pauseAfterConsecutiveFailures runs in a row ended FAILED or UNKNOWN',
} as const;
export type PauseReason = keyof typeof PAUSE_REASONS;

export interface Schedule extends ScheduleDefinition {
  id: string;
  tenantId: string;
  revision: number;
  status: ScheduleStatus;
  nextDueAt: Date | null;
  /** Runs the poller created to run (QUEUED) so far: what maxRuns counts. */
  runCount: number;
  /** Set while paused: why, and (for an auto-pause) which runs. */
  pausedReason: PauseReason | null;
  pausedNote: string | null;
  /** The create's span, when it was traced. */
  traceParent: string | null;
  /** The API key that created it (its public id): revision 1's author. */
  createdByApiKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * What the poller reads of a schedule to dispatch it: all of it but what only its runs' calls
 * (the payload, read by the claim) and the API (labels) need. A payload is up to 64 KiB of
 * JSON that Postgres would send and `pg` parse on the poller's event loop for every due entry
 * of a batch, for nothing.
 */
export type DispatchSchedule = Omit<Schedule, 'payload' | 'labels'>;

/** Statuses that still count against maxActiveSchedules and may still fire. */
export const LIVE_STATUSES: readonly ScheduleStatus[] = ['active', 'paused'];
