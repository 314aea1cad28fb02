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
  /** What the target answered, when it answered. */
  response: AttemptResponse | null;
  /** The W3C trace id of the attempt's target call, when tracing is on. */
  traceId: string | null;
}

/** The target's answer as kept: status, allow-listed headers, the start of the body. */
export interface AttemptResponse {
  status: number;
  headers: Record<string, string>;
  bodyExcerpt: string;
}

/** How an attempt ended, as its holder (or the sweeper) reports it. */
export interface AttemptEnd {
  outcome: AttemptOutcome;
  httpStatus?: number | null;
  durationMs?: number | null;
  error?: string | null;
  /** Headers and body excerpt of the answer (its status is httpStatus). */
  response?: { headers: Record<string, string>; bodyExcerpt: string } | null;
  traceId?: string | null;
}

/** Errors are shown to the tenant and kept forever: bounded, whatever a target answered. */
export const MAX_ATTEMPT_ERROR_LENGTH = 2000;
