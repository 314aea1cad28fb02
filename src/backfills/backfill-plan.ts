import { occurrencesBetween, type Occurrence } from '../recurrence';
import type { RunState } from '../run-vocabulary';
import { recurrenceSpec, type Schedule } from '../schedules';
import {
  BACKFILL_LIMITS,
  type InstantAction,
  type PlannedInstant,
  type ReprocessMode,
} from './backfill';

const ACTIVE: readonly RunState[] = ['QUEUED', 'RUNNING', 'RETRY_WAIT'];
const FAILED: readonly RunState[] = ['FAILED', 'UNKNOWN'];

/** The instants of [from, to], DST policy and excluded dates applied; null when over the bound. */
export function backfillInstants(schedule: Schedule, from: Date, to: Date): Occurrence[] | null {
  const spec = recurrenceSpec(schedule)!;
  const window = occurrencesBetween(
    spec,
    new Date(from.getTime() - 1),
    to,
    BACKFILL_LIMITS.maxInstants,
  );
  return window.truncated ? null : window.occurrences;
}

/**
 * The point the poller has reached for this schedule: it dispatches instants from here on
 * itself (an active schedule's nextDueAt; a paused one resumes from where the pause began), so a
 * backfill leaves them to it and never runs an instant the schedule will also run. A completed
 * schedule dispatches nothing more.
 */
export function dispatchFrontier(schedule: Schedule): number {
  switch (schedule.status) {
    case 'active':
      return schedule.nextDueAt?.getTime() ?? Infinity;
    case 'paused':
      return schedule.updatedAt.getTime();
    default:
      return Infinity;
  }
}

/** What the backfill does with one instant, given the run that stands for it now. */
export function actionFor(
  at: Date,
  frontier: number,
  existing: { state: RunState } | undefined,
  reprocess: ReprocessMode,
): InstantAction {
  if (at.getTime() >= frontier) return 'left_to_schedule';
  if (!existing) return 'run';
  if (ACTIVE.includes(existing.state)) return 'skip_active';
  if (reprocess === 'all' || (reprocess === 'failed' && FAILED.includes(existing.state))) {
    return 'rerun';
  }
  return 'skip_existing';
}

export function planInstants(
  instants: readonly Occurrence[],
  frontier: number,
  existing: ReadonlyMap<number, { id: string; state: RunState }>,
  reprocess: ReprocessMode,
): PlannedInstant[] {
  return instants.map((instant) => {
    const run = existing.get(instant.at.getTime());
    return {
      at: instant.at,
      local: instant.local,
      action: actionFor(instant.at, frontier, run, reprocess),
      existingRun: run ?? null,
    };
  });
}
