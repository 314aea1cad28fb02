import type { AttemptOutcomeRecord } from '../attempts/attempt';
import type { RunState } from './occurrence';
import type { AttemptReport, ClaimRefusal } from './run';

/**
 * The product rules for where a run goes next, as pure functions: the repository reads the run
 * under its fence, these decide, and the fenced UPDATE writes the decision.
 */

/** A RUNNING run as read under its fence, with the database clock. */
export interface HeldRun {
  /** The attempt that just ended (= attempt_count). */
  attempt: number;
  maxAttempts: number;
  retryDeadline: Date;
  /** Cancel requested on the run, or its schedule cancelled: no further attempt may start. */
  cancelRequested: boolean;
  dbNow: Date;
}

export type LeavingState = 'SUCCEEDED' | 'RETRY_WAIT' | 'FAILED' | 'UNKNOWN' | 'CANCELLED';

export interface Transition {
  state: LeavingState;
  reason: string | null;
  /** Only for RETRY_WAIT: how long from the database's now() until the next attempt. */
  retryDelayMs: number | null;
  attemptOutcome: AttemptOutcomeRecord;
}

export const LEASE_EXPIRED_REASON = 'lease expired; the target may have acted';

/**
 * After an attempt ended. A retryable failure is retried only while attempts and the retry
 * deadline last and nobody asked to cancel; a run that gives up after an attempt that may have
 * landed is UNKNOWN, not FAILED, because FAILED would claim the target did nothing.
 */
export function transitionAfterAttempt(
  run: HeldRun,
  report: AttemptReport,
  nextDelayMs: () => number,
): Transition {
  const outcome = report.outcome;
  const error = report.error;
  switch (outcome) {
    case 'succeeded':
      return { state: 'SUCCEEDED', reason: null, retryDelayMs: null, attemptOutcome: outcome };
    case 'failed':
      return { state: 'FAILED', reason: error, retryDelayMs: null, attemptOutcome: outcome };
    case 'unknown':
      return { state: 'UNKNOWN', reason: error, retryDelayMs: null, attemptOutcome: outcome };
    case 'cancelled':
      return {
        state: 'CANCELLED',
        reason: cancelledReason(run.attempt, report.mayHaveActed),
        retryDelayMs: null,
        attemptOutcome: outcome,
      };
    case 'retryable':
      return retryOrGiveUp(run, report, nextDelayMs, outcome);
  }
}

/**
 * After the sweeper found the lease expired: the holder is gone or paused, and whatever it sent
 * may have landed. Only a target that deduplicates by Idempotency-Key is retried.
 */
export function transitionAfterLeaseExpiry(
  run: HeldRun,
  deduplicates: boolean,
  nextDelayMs: () => number,
): Transition {
  if (run.cancelRequested) {
    return {
      state: 'CANCELLED',
      reason:
        `cancelled by request; the lease expired while attempt ${run.attempt} was in flight, ` +
        'so its effect may already have happened',
      retryDelayMs: null,
      attemptOutcome: 'lease_lost',
    };
  }
  if (!deduplicates) {
    return {
      state: 'UNKNOWN',
      reason: LEASE_EXPIRED_REASON,
      retryDelayMs: null,
      attemptOutcome: 'lease_lost',
    };
  }
  const report: AttemptReport = {
    outcome: 'retryable',
    error:
      `lease expired during attempt ${run.attempt}; retrying with the same Idempotency-Key ` +
      'because the target deduplicates',
    mayHaveActed: true,
  };
  return retryOrGiveUp(run, report, nextDelayMs, 'lease_lost');
}

function retryOrGiveUp(
  run: HeldRun,
  report: AttemptReport,
  nextDelayMs: () => number,
  attemptOutcome: AttemptOutcomeRecord,
): Transition {
  const error = report.error ?? 'retryable failure';
  const giveUp = report.mayHaveActed ? 'UNKNOWN' : 'FAILED';
  if (run.cancelRequested) {
    return {
      state: 'CANCELLED',
      reason: `${cancelledReason(run.attempt, report.mayHaveActed)}; last error: ${error}`,
      retryDelayMs: null,
      attemptOutcome,
    };
  }
  if (run.attempt >= run.maxAttempts) {
    return {
      state: giveUp,
      reason: `${error}; no attempts left (${run.attempt} of ${run.maxAttempts})`,
      retryDelayMs: null,
      attemptOutcome,
    };
  }
  const delay = Math.max(0, Math.round(nextDelayMs()));
  if (run.dbNow.getTime() + delay >= run.retryDeadline.getTime()) {
    return {
      state: giveUp,
      reason: `${error}; the retry deadline passes before the next attempt could start`,
      retryDelayMs: null,
      attemptOutcome,
    };
  }
  return { state: 'RETRY_WAIT', reason: error, retryDelayMs: delay, attemptOutcome };
}

function cancelledReason(attempt: number, mayHaveActed: boolean): string {
  return mayHaveActed
    ? `cancelled by request while attempt ${attempt} was in flight; its effect may already have happened`
    : `cancelled by request before attempt ${attempt} reached the target`;
}

/** Why the claim's conditional UPDATE matched nothing, read right after it in its transaction. */
export interface ClaimDiagnosis {
  state: RunState;
  notDue: boolean;
  scheduleCancelled: boolean;
  cancelRequested: boolean;
  attemptsExhausted: boolean;
  deadlinePassed: boolean;
  tenantAtCapacity: boolean;
  overlapping: boolean;
}

/**
 * The refusal to report, most final first: a cancelled or exhausted run is ended whatever else
 * holds it back. Null when nothing blocks any more (a permit was released meanwhile): claim again.
 */
export function claimRefusal(d: ClaimDiagnosis | null): ClaimRefusal | null {
  if (!d) return 'not_found';
  if (d.state === 'RUNNING') return 'already_claimed';
  if (d.state !== 'QUEUED' && d.state !== 'RETRY_WAIT') return 'finished';
  if (d.scheduleCancelled || d.cancelRequested) return 'cancelled';
  if (d.attemptsExhausted || d.deadlinePassed) return 'exhausted';
  if (d.notDue) return 'not_due';
  if (d.overlapping) return 'overlap';
  if (d.tenantAtCapacity) return 'throttled';
  return null;
}
