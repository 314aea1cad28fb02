import type { AttemptOutcome } from '../run-vocabulary';

/** One row of a run's append-only audit trail. */
export interface Attempt {
  runId: string;
  attemptNo: number;
  workerId: string;
  fencingToken: number;
  startedAt: Date;
  endedAt: Date | null;
  outcome: AttemptOutcome | null;
  httpStatus: number | null;
  durationMs: number | null;
  error: string | null;
}

/** How an attempt ended, as its holder (or the sweeper) reports it. */
export interface AttemptEnd {
  outcome: AttemptOutcome;
  httpStatus?: number | null;
  durationMs?: number | null;
  error?: string | null;
}

/** Errors are shown to the tenant and kept forever: bounded, whatever a target answered. */
export const MAX_ATTEMPT_ERROR_LENGTH = 2000;
