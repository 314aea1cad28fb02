import type { OverlapPolicy } from '../overlap';
import type { RunState } from '../run-vocabulary';

export const REPROCESS_MODES = ['missing', 'failed', 'all'] as const;
/** missing: instants with no run; failed: also those whose run ended FAILED/UNKNOWN; all: every one. */
export type ReprocessMode = (typeof REPROCESS_MODES)[number];

export const BACKFILL_ORDERS = ['oldest', 'newest'] as const;
export type BackfillOrder = (typeof BACKFILL_ORDERS)[number];

export const BACKFILL_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type BackfillStatus = (typeof BACKFILL_STATUSES)[number];

/** What a backfill does with one instant of its range (a dry run answers these). */
export const INSTANT_ACTIONS = {
  run: 'no run stands for the instant: a backfill run is created',
  rerun: 'its run ended and reprocess includes it: a new backfill run is created beside it',
  skip_existing: 'a run stands for the instant and reprocess leaves it',
  skip_active: 'a run of the instant is active now: it is not doubled',
  left_to_schedule:
    'the instant is at or after the point the poller has reached: the schedule runs it itself',
} as const;
export type InstantAction = keyof typeof INSTANT_ACTIONS;
export const INSTANT_ACTION_CODES = Object.keys(INSTANT_ACTIONS) as InstantAction[];

/** What became of an instant the backfill was to run. */
export const INSTANT_OUTCOMES = [
  'created',
  'skip_existing',
  'skip_active',
  'skipped_overlap',
  'cancelled',
] as const;
export type InstantOutcome = (typeof INSTANT_OUTCOMES)[number];

export const BACKFILL_LIMITS = {
  maxInstants: 10_000,
  maxConcurrent: 100,
} as const;

export interface BackfillRequest {
  from: Date;
  to: Date;
  reprocess: ReprocessMode;
  /** skip | buffer_one: one run of the schedule at a time; allow: up to maxConcurrent. */
  overlapPolicy: OverlapPolicy;
  maxConcurrent: number;
  order: BackfillOrder;
}

export interface PlannedInstant {
  at: Date;
  local: string;
  action: InstantAction;
  /** The run that stands for it now, if any. */
  existingRun: { id: string; state: RunState } | null;
}

export interface Backfill extends BackfillRequest {
  id: string;
  tenantId: string;
  scheduleId: string;
  status: BackfillStatus;
  /** Instants of the range, by the action planned for each. */
  plan: Record<InstantAction, number>;
  /** Of the instants to run: how many were processed, created, skipped. */
  processed: number;
  created: number;
  skipped: number;
  /** The backfill's runs by state (on GET). */
  runs: Partial<Record<RunState, number>>;
  requestedByApiKeyId: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}
