import type { RunPriority, RunReason, RunState } from '../run-vocabulary';

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
  priority: RunPriority;
  /** What the attempt sends as Idempotency-Key: the run id, or a replay's original's. */
  idempotencyKey: string;
  /** This claim starts the run's first attempt past its schedule's lateAfterSeconds. */
  startsLate: boolean;
}

/** Why a claim was refused. Each is a different fact, and callers act on them differently. */
export type ClaimRefusal = Extract<
  RunReason,
  /** No such run for this tenant. */
  | 'not_found'
  /** The run already ended (any final state). */
  | 'finished'
  /** Another worker holds it (RUNNING). */
  | 'already_claimed'
  /** The run, or its schedule, was cancelled; the run is now CANCELLED if it was waiting. */
  | 'cancelled_by_request'
  | 'schedule_cancelled'
  /** No attempts or retry time left; the run is now FAILED. */
  | 'attempts_exhausted'
  | 'retry_deadline_exceeded'
  /** Its first attempt can no longer start within its start deadline; the run is SKIPPED. */
  | 'deadline_exceeded'
  /** Its instant (or its retry time) has not come yet by the database clock. */
  | 'not_due'
  /** The tenant already has maxConcurrentRuns runs RUNNING. */
  | 'throttled_concurrency'
  /** The tenant's dispatchRatePerSecond is spent for now. */
  | 'throttled_rate'
  /** Another run of the schedule is RUNNING and the overlap policy does not allow two. */
  | 'overlap'
  /** Its target is disabled; the run is now FAILED. */
  | 'target_gone'
  /** Its target asked to slow down (Retry-After) and that time has not passed. */
  | 'target_backoff'
  /** Its target's maxConcurrency or ratePerSecond is spent for now. */
  | 'throttled_target'
  /** The run changed while it was being claimed (a rare race): try again shortly. */
  | 'contended'
>;

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

export interface ClaimOptions {
  /**
   * The caller consumed a queue job for this run (the built-in worker): a run that must come back
   * by itself (not due yet, a retry its tenant cannot afford yet) gets a new job, so
   * acknowledging the consumed one loses nothing. A QUEUED run its tenant cannot afford gets no
   * job either way: it waits for the admitter. An external worker's claim never requeues, so
   * polling a run cannot multiply its jobs.
   */
  requeue?: boolean;
}

/** A run to claim: the ids its queue job carries. */
export interface ClaimRequest {
  runId: string;
  tenantId: string;
  /** The run's scheduled_at (ISO 8601) when known (its queue job carries it): prunes partitions. */
  scheduledAt?: string;
}
