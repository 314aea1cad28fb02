import type { AttemptOutcome, EndReason, LeavingState, RunReason } from '../run-vocabulary';
import type { AttemptReport } from './execution';

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

export interface Transition {
  state: LeavingState;
  reason: RunReason | null;
  /** Free text beside the reason (the error, the attempt it concerns). */
  detail: string | null;
  /** Only for RETRY_WAIT: how long from the database's now() until the next attempt. */
  retryDelayMs: number | null;
  attemptOutcome: AttemptOutcome;
}

export const LEASE_EXPIRED_DETAIL = 'lease expired; the target may have acted';

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
  const settled = transitionOfReport(report);
  if (settled) return settled;
  if (report.outcome === 'cancelled') {
    return {
      state: 'CANCELLED',
      reason: 'cancelled_by_request',
      detail: cancelledDetail(run.attempt, report.mayHaveActed),
      retryDelayMs: null,
      attemptOutcome: report.outcome,
    };
  }
  return retryOrGiveUp(run, report, 'retryable_failure', nextDelayMs, report.outcome);
}

/**
 * The transition a report decides by itself, whatever the run's attempts, deadline or cancel
 * request: a success, a failure that is not retried, an outcome the holder could not learn.
 * Null when the run as read under its fence decides (a retryable failure, a cancellation).
 */
export function transitionOfReport(report: AttemptReport): Transition | null {
  const final = (state: LeavingState, reason: RunReason | null, detail: string | null) => ({
    state,
    reason,
    detail,
    retryDelayMs: null,
    attemptOutcome: report.outcome,
  });
  switch (report.outcome) {
    case 'succeeded':
      return final('SUCCEEDED', null, null);
    case 'failed':
      return final('FAILED', report.failure ?? 'target_rejected', report.error);
    case 'unknown':
      return final('UNKNOWN', 'outcome_unknown', report.error);
    case 'cancelled':
    case 'retryable':
      return null;
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
      reason: 'cancelled_by_request',
      detail:
        `the lease expired while attempt ${run.attempt} was in flight, ` +
        'so its effect may already have happened',
      retryDelayMs: null,
      attemptOutcome: 'lease_lost',
    };
  }
  if (!deduplicates) {
    return {
      state: 'UNKNOWN',
      reason: 'lease_expired',
      detail: LEASE_EXPIRED_DETAIL,
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
  return retryOrGiveUp(run, report, 'lease_expired', nextDelayMs, 'lease_lost');
}

function retryOrGiveUp(
  run: HeldRun,
  report: AttemptReport,
  retryReason: Extract<EndReason, 'retryable_failure' | 'lease_expired'>,
  nextDelayMs: () => number,
  attemptOutcome: AttemptOutcome,
): Transition {
  const error = report.error ?? 'retryable failure';
  const giveUp = report.mayHaveActed ? 'UNKNOWN' : 'FAILED';
  const end = (state: LeavingState, reason: RunReason, detail: string): Transition => ({
    state,
    reason,
    detail,
    retryDelayMs: null,
    attemptOutcome,
  });
  if (run.cancelRequested) {
    return end(
      'CANCELLED',
      'cancelled_by_request',
      `${cancelledDetail(run.attempt, report.mayHaveActed)}; last error: ${error}`,
    );
  }
  if (run.attempt >= run.maxAttempts) {
    return end(
      giveUp,
      'attempts_exhausted',
      `${error}; no attempts left (${run.attempt} of ${run.maxAttempts})`,
    );
  }
  const delay = Math.max(0, Math.round(nextDelayMs()));
  if (run.dbNow.getTime() + delay >= run.retryDeadline.getTime()) {
    return end(
      giveUp,
      'retry_deadline_exceeded',
      `${error}; the retry deadline passes before the next attempt could start`,
    );
  }
  return {
    state: 'RETRY_WAIT',
    reason: retryReason,
    detail: error,
    retryDelayMs: delay,
    attemptOutcome,
  };
}

function cancelledDetail(attempt: number, mayHaveActed: boolean): string {
  return mayHaveActed
    ? `cancelled while attempt ${attempt} was in flight; its effect may already have happened`
    : `cancelled before attempt ${attempt} reached the target`;
}
