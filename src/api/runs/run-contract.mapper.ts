import type { Claim, ClaimRefusal, ClaimResult } from '../../admission';
import { ConflictError, NotFoundError } from '../../common';
import type { AttemptReport, CompletionResult, HeartbeatResult } from '../../execution';
import type { RunReason } from '../../run-vocabulary';
import type { CompleteRunDto } from './run-request.dto';

/**
 * Translation between the worker contract's HTTP shapes and the execution service: the service
 * answers with results (the built-in worker branches on them), HTTP answers 404 or 409.
 */

const CLAIM_REFUSALS: Record<ClaimRefusal, string> = {
  not_found: 'not found',
  finished: 'has already ended',
  already_claimed: 'is held by another worker',
  cancelled_by_request: 'was cancelled',
  schedule_cancelled: 'belongs to a cancelled schedule',
  attempts_exhausted: 'has no attempts left',
  retry_deadline_exceeded: 'has no retry time left',
  deadline_exceeded: 'could not start within its start deadline and was skipped',
  not_due: 'is not due yet',
  throttled_concurrency: "would exceed the tenant's maxConcurrentRuns",
  throttled_rate: "would exceed the tenant's dispatchRatePerSecond; retry shortly",
  overlap: 'would overlap a running run of its schedule',
  target_gone: 'has a disabled target and ended FAILED',
  target_backoff: 'has a target that asked to slow down (Retry-After); retry after it',
  throttled_target: "would exceed its target's maxConcurrency or ratePerSecond; retry shortly",
  contended: 'changed while being claimed; try again',
};

export function claimOrThrow(runId: string, result: ClaimResult): Claim {
  if (result.claimed) return result.claim;
  if (result.reason === 'not_found') throw new NotFoundError('run', runId);
  throw new ConflictError(`run ${runId} cannot be claimed: it ${CLAIM_REFUSALS[result.reason]}`, {
    reason: result.reason,
    currentState: result.state,
  });
}

export function heldOrThrow(
  runId: string,
  fencingToken: number,
  result: HeartbeatResult,
): Extract<HeartbeatResult, { held: true }> {
  if (result.held) return result;
  throw staleFence(runId, fencingToken);
}

export function acceptedOrThrow(
  runId: string,
  fencingToken: number,
  result: CompletionResult,
): Extract<CompletionResult, { accepted: true }> {
  if (result.accepted) return result;
  if (result.state === null) throw new NotFoundError('run', runId);
  throw staleFence(runId, fencingToken, result.state);
}

function staleFence(runId: string, fencingToken: number, state?: string): ConflictError {
  return new ConflictError(
    `fencing token ${fencingToken} no longer holds run ${runId}: its lease expired or another ` +
      'worker claimed it; stop and write nothing',
    {
      reason: 'stale_fencing_token' satisfies RunReason,
      ...(state ? { currentState: state } : {}),
    },
  );
}

/**
 * An external worker's report. "unknown" + retryable means the target deduplicates, so the
 * attempt may be repeated although it may have landed.
 */
export function toAttemptReport(dto: CompleteRunDto): AttemptReport {
  const base = {
    error: dto.error ?? null,
    httpStatus: dto.httpStatus ?? null,
    durationMs: dto.durationMs ?? null,
  };
  switch (dto.outcome) {
    case 'succeeded':
      return { ...base, outcome: 'succeeded', error: null, mayHaveActed: true };
    case 'failed':
      return {
        ...base,
        outcome: dto.retryable ? 'retryable' : 'failed',
        error: base.error ?? 'the worker reported a failure',
        mayHaveActed: false,
      };
    case 'unknown':
      return {
        ...base,
        outcome: dto.retryable ? 'retryable' : 'unknown',
        error: base.error ?? 'the worker could not tell whether the target acted',
        mayHaveActed: true,
      };
    case 'cancelled':
      return { ...base, outcome: 'cancelled', mayHaveActed: true };
  }
}
