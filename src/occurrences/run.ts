import type { Attempt } from '../attempts/attempt';
import type { RunState } from './occurrence';

/** A run (an occurrence) as the rest of the system and the API see it. */
export interface Run {
  id: string;
  tenantId: string;
  scheduleId: string;
  revision: number;
  scheduledAt: Date;
  scheduledLocal: string;
  state: RunState;
  reason: string | null;
  trigger: 'schedule' | 'manual';
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
}

export interface RunWithAttempts extends Run {
  attempts: Attempt[];
}

export interface RunPage {
  items: Run[];
  /** Id of the last item when there is a next page. */
  nextAfterId: string | null;
}

/** Why a claim was refused. Each is a different fact, and callers act on them differently. */
export type ClaimRefusal =
  /** No such run for this tenant. */
  | 'not_found'
  /** The run already ended (any final state). */
  | 'finished'
  /** Another worker holds it (RUNNING). */
  | 'already_claimed'
  /** The run or its schedule was cancelled; the run is now CANCELLED if it was waiting. */
  | 'cancelled'
  /** No attempts or retry time left; the run is now FAILED. */
  | 'exhausted'
  /** Its instant (or its retry time) has not come yet by the database clock. */
  | 'not_due'
  /** The tenant already has maxConcurrentRuns runs RUNNING. */
  | 'throttled'
  /** The tenant's dispatchRatePerSecond is spent for now. */
  | 'rate_limited'
  /** Another run of the schedule is RUNNING and the overlap policy does not allow two. */
  | 'overlap'
  /** The run changed while it was being claimed (a rare race): try again shortly. */
  | 'contended';

/** What a worker holds after a claim: the run under a fence, with what the target needs. */
export interface Claim {
  runId: string;
  tenantId: string;
  scheduleId: string;
  fencingToken: number;
  /** 1-based: the attempt this claim started. */
  attempt: number;
  leaseUntil: Date;
  scheduledAt: Date;
  targetId: string;
  payload: Record<string, unknown>;
}

export type ClaimResult =
  | { claimed: true; claim: Claim }
  | {
      claimed: false;
      reason: ClaimRefusal;
      /** The run's state after the refusal (null when not found). */
      state: RunState | null;
      /** Set when a new job for the run was published: its delay from now. */
      requeuedInMs: number | null;
    };

export type HeartbeatResult =
  | { held: true; leaseUntil: Date; cancelRequested: boolean }
  /** The fence moved on or the run left RUNNING: the caller no longer holds it. */
  | { held: false };

/**
 * How an attempt ended, as the holder reports it. `retryable` is a failure that may be repeated
 * (the target did not act, or it deduplicates); `cancelled` means the holder stopped because
 * cancellation was requested.
 */
export interface AttemptReport {
  outcome: 'succeeded' | 'retryable' | 'failed' | 'unknown' | 'cancelled';
  /** What happened, in the tenant's terms; stored on the attempt and, when final, the run. */
  error: string | null;
  /** The target may have acted on this attempt even though it did not confirm. */
  mayHaveActed: boolean;
  httpStatus?: number | null;
  durationMs?: number | null;
  /** A server-sent Retry-After, already capped. */
  retryAfterMs?: number | null;
}

export type CompletionResult =
  | {
      accepted: true;
      state: RunState;
      reason: string | null;
      nextAttemptAt: Date | null;
      retryInMs: number | null;
    }
  /** The fence moved on: the report was rejected and noted on its attempt. */
  | { accepted: false; state: RunState | null };

export interface CancelResult {
  run: Run;
  /** True when an attempt was running: it may still reach (or have reached) the target. */
  inFlight: boolean;
}
