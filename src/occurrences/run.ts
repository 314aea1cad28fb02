import type { Attempt } from '../attempts';
import type { RunPriority, RunReason, RunState } from '../run-vocabulary';
import type { RunTrigger } from './occurrence';

/** A run (an occurrence) as the rest of the system and the API see it. */
export interface Run {
  id: string;
  tenantId: string;
  scheduleId: string;
  revision: number;
  scheduledAt: Date;
  scheduledLocal: string;
  state: RunState;
  /** Why it is in its state, as a machine code; null where there is no why (SUCCEEDED). */
  reason: RunReason | null;
  /** Free text beside the reason: an error message, the attempt it happened in. */
  reasonDetail: string | null;
  trigger: RunTrigger;
  /**
   * What every attempt sends as Idempotency-Key: the run's own id, or for a replay the
   * original's, so a deduplicating target treats the replay as the same business operation.
   */
  idempotencyKey: string;
  /** The run this one replays; null for any other run. */
  replayOf: string | null;
  attemptCount: number;
  maxAttempts: number;
  fencingToken: number;
  leaseUntil: Date | null;
  nextAttemptAt: Date | null;
  cancelRequestedAt: Date | null;
  /** Missed instants folded into this run; null when there were none. */
  coalesced: { count: number; first: Date | null; last: Date | null } | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** Its schedule's priority when it was created. */
  priority: RunPriority;
  /** Past this instant it is SKIPPED rather than started; null: no deadline. */
  startDeadline: Date | null;
  /** Its planned fire instant (scheduledAt, unless its schedule has a flexible window). */
  firesAt: Date;
  /** For a run waiting for its tenant's budget: when it should start (GET /runs/{id} only). */
  estimatedStartAt: Date | null;
  /** The W3C trace id of the run's trace (tracing on when it was created). */
  traceId: string | null;
}

export interface RunWithAttempts extends Run {
  attempts: Attempt[];
}

export interface RunPage {
  items: Run[];
  /** Id of the last item when there is a next page. */
  nextAfterId: string | null;
}

export interface CancelResult {
  run: Run;
  /** True when an attempt was running: it may still reach (or have reached) the target. */
  inFlight: boolean;
}
