/**
 * Why a run is in its state, or why it was not claimed: one machine code per fact, so "why
 * didn't it run?" is a query. Free text (an error message, the attempt it happened in) goes in
 * the run's `reasonDetail`, never here. The description names the state(s) a code appears with;
 * OpenAPI lists these codes as the `reason` enum.
 */
export const RUN_REASONS = {
  // SKIPPED: a nominal instant that did not run, with its row all the same.
  overlap: 'SKIPPED: another run of the schedule was active and its overlapPolicy is skip',
  missed:
    'SKIPPED: the instant passed while no poller could dispatch it (downtime, pause) and the ' +
    'missedRunPolicy does not run it',
  coalesced: 'SKIPPED: folded into a later run by missedRunPolicy latest (see its coalesced)',
  deadline_exceeded:
    'SKIPPED: it could not start within startDeadlineSeconds of its instant, so it was never called',
  // QUEUED: waiting, with the reason it waits.
  waiting_for_previous:
    'QUEUED: waits for the active run of its schedule to end (overlapPolicy buffer_one, or ' +
    'catch-up runs queued one behind another)',
  throttled_concurrency:
    "QUEUED: the tenant's maxConcurrentRuns are all in use; admitted when one frees (estimatedStartAt)",
  throttled_rate:
    "QUEUED: the tenant's dispatchRatePerSecond is spent for the moment; admitted at that rate (estimatedStartAt)",
  throttled_fleet:
    'QUEUED: every worker slot is taken; free slots go to the waiting tenants in proportion to ' +
    'their weight quota',
  // RETRY_WAIT: the next attempt is due at nextAttemptAt.
  retryable_failure: 'RETRY_WAIT: the attempt failed in a way that may be tried again',
  lease_expired:
    "RETRY_WAIT or UNKNOWN: the worker's lease expired with its attempt in flight; retried only " +
    'for a target that deduplicates, else UNKNOWN',
  // FAILED: the target did not act, and will not be asked again.
  target_rejected: 'FAILED: the target answered with a final error (or the worker reported one)',
  target_missing: 'FAILED: the target was deleted before the attempt',
  attempts_exhausted: 'FAILED or UNKNOWN: no attempts left',
  retry_deadline_exceeded:
    'FAILED or UNKNOWN: the retry deadline passes before another attempt could start',
  // UNKNOWN: the target may have acted and cannot tell us.
  outcome_unknown:
    'UNKNOWN: the call may have reached a target that does not deduplicate (e.g. a timeout ' +
    'after sending), so it is not repeated',
  // CANCELLED
  cancelled_by_request: 'CANCELLED: POST /runs/{id}/cancel (an attempt in flight may have acted)',
  schedule_cancelled: 'CANCELLED: its schedule was cancelled',
  // Claim refusals only (the worker contract's 409 `reason`): the run itself keeps its state.
  not_found: 'claim refused: no such run for this tenant',
  finished: 'claim refused: the run has already ended',
  already_claimed: 'claim refused: another worker holds the run',
  not_due: 'claim refused: its instant (or its retry time) has not come by the database clock',
  contended: 'claim refused: the run changed while it was being claimed; try again',
  stale_fencing_token: 'heartbeat or completion refused: the fencing token is no longer current',
} as const;

export type RunReason = keyof typeof RUN_REASONS;
export const RUN_REASON_CODES = Object.keys(RUN_REASONS) as RunReason[];

/** Why a nominal instant was recorded SKIPPED. */
export type SkipReason = Extract<
  RunReason,
  'overlap' | 'missed' | 'coalesced' | 'deadline_exceeded'
>;
/** Why a QUEUED run is not running yet. */
export type WaitReason = Extract<
  RunReason,
  'waiting_for_previous' | 'throttled_concurrency' | 'throttled_rate' | 'throttled_fleet'
>;
/** Why a QUEUED run waits for admission (its tenant's budget or a worker slot). */
export type AdmissionWait = Exclude<WaitReason, 'waiting_for_previous'>;
export const ADMISSION_WAITS: readonly AdmissionWait[] = [
  'throttled_concurrency',
  'throttled_rate',
  'throttled_fleet',
];
/** Why a run was CANCELLED. */
export type CancelReason = Extract<RunReason, 'cancelled_by_request' | 'schedule_cancelled'>;
/** Why a run gave up (FAILED or UNKNOWN) or waits for a retry. */
export type EndReason = Extract<
  RunReason,
  | 'retryable_failure'
  | 'lease_expired'
  | 'target_rejected'
  | 'target_missing'
  | 'attempts_exhausted'
  | 'retry_deadline_exceeded'
  | 'outcome_unknown'
>;

export function isRunReason(value: string): value is RunReason {
  return Object.prototype.hasOwnProperty.call(RUN_REASONS, value);
}
