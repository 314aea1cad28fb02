import type { NewOccurrence, Run } from '../occurrences';
import type { Schedule } from '../schedules';
import type { BulkOutcome } from './bulk-operation';

/** States a replay may start from: the run ended without the target confirming it acted. */
export const REPLAYABLE_STATES = ['FAILED', 'UNKNOWN'] as const;

/**
 * The run that replays `original`, or why there is none. It stands for the same instant
 * (scheduledAt), runs under the schedule's current revision, and keeps the original's
 * idempotency key, so a deduplicating target sees the same business operation. Its identity's
 * origin is the original's id: each run is replayed once (replaying twice at the same moment
 * creates one run), and a failed replay is replayed in turn. No start deadline: a replay is
 * deliberately late.
 */
export function planReplay(
  original: Run,
  schedule: Schedule | undefined,
): NewOccurrence | Extract<BulkOutcome, 'not_replayable' | 'schedule_cancelled'> {
  if (!(REPLAYABLE_STATES as readonly string[]).includes(original.state)) return 'not_replayable';
  if (!schedule || schedule.status === 'cancelled') return 'schedule_cancelled';
  return {
    tenantId: original.tenantId,
    scheduleId: original.scheduleId,
    revision: schedule.revision,
    scheduledAt: original.scheduledAt,
    scheduledLocal: original.scheduledLocal,
    state: 'QUEUED',
    reason: null,
    trigger: 'replay',
    maxAttempts: schedule.retryPolicy.maxAttempts,
    retryDeadlineSeconds: schedule.retryPolicy.retryDeadlineSeconds,
    priority: schedule.priority,
    startDeadlineSeconds: null,
    originKey: original.id,
    idempotencyKey: original.idempotencyKey,
    replayOf: original.id,
  };
}
