import type { RunState } from '../run-vocabulary';
import type { ClaimRefusal } from './claim';

/** Why the claim statement did not take a run, read right after it in its transaction. */
export interface ClaimDiagnosis {
  state: RunState;
  /** Admitted already: it holds its permit and has spent its token, budget does not apply. */
  admitted: boolean;
  /** Its first attempt can no longer start within the schedule's startDeadlineSeconds. */
  startDeadlinePassed: boolean;
  notDue: boolean;
  scheduleCancelled: boolean;
  cancelRequested: boolean;
  attemptsExhausted: boolean;
  deadlinePassed: boolean;
  tenantAtCapacity: boolean;
  overlapping: boolean;
  /** How long until the tenant has a whole rate token (0: it has one now). */
  rateWaitMs: number;
  /** Its target is disabled (410 Gone, or by request). */
  targetGone: boolean;
  /** How long its target's backoff still lasts (0: none). */
  targetBackoffMs: number;
  /** Its target has no free permit or token for a run that was not admitted. */
  targetAtCapacity: boolean;
}

/**
 * The refusal to report, most final first: a cancelled or exhausted run is ended whatever else
 * holds it back. Null when nothing blocks any more (a permit was released meanwhile): claim
 * again.
 */
export function claimRefusal(d: ClaimDiagnosis | null): ClaimRefusal | null {
  if (!d) return 'not_found';
  if (d.state === 'RUNNING') return 'already_claimed';
  if (d.state !== 'QUEUED' && d.state !== 'RETRY_WAIT') return 'finished';
  if (d.scheduleCancelled) return 'schedule_cancelled';
  if (d.cancelRequested) return 'cancelled_by_request';
  if (d.attemptsExhausted) return 'attempts_exhausted';
  if (d.deadlinePassed) return 'retry_deadline_exceeded';
  if (d.startDeadlinePassed) return 'deadline_exceeded';
  if (d.notDue) return 'not_due';
  if (d.targetGone) return 'target_gone';
  if (d.overlapping) return 'overlap';
  // Even an admitted run waits out its target's backoff: no attempt is spent on it.
  if (d.targetBackoffMs > 0) return 'target_backoff';
  if (d.admitted) return null;
  if (d.tenantAtCapacity) return 'throttled_concurrency';
  if (d.rateWaitMs > 0) return 'throttled_rate';
  if (d.targetAtCapacity) return 'throttled_target';
  return null;
}
