import type { NewOccurrence } from '../occurrences';
import { planNewRun, type ActiveRuns } from '../overlap';
import { nextOccurrence, Occurrence, occurrencesBetween, toLocalIso } from '../recurrence';
import type { SkipReason } from '../run-vocabulary';
import { recurrenceSpec, type Schedule, type ScheduleStatus } from '../schedules';

/** How many instants one due entry may expand to before older ones are only counted. */
export const MAX_INSTANTS_PER_ENTRY = 1000;
/** At most this many SKIPPED rows are written per entry; the rest are counted on the run. */
export const MAX_SKIPPED_ROWS = 100;
/** Under `skip`, a latest instant older than this is missed too, not run late. */
export const SKIP_GRACE_MS = 30_000;

export interface PlannedOccurrence extends NewOccurrence {
  /** Publish a queue job now (false for SKIPPED and for runs waiting for a previous one). */
  publish: boolean;
}

export interface DispatchPlan {
  occurrences: PlannedOccurrence[];
  nextDueAt: Date | null;
  status: ScheduleStatus;
  /** Runs created to run (QUEUED): what the schedule's maxRuns counts. */
  runsCreated: number;
}

/**
 * What one due-index entry turns into, decided from the schedule and the database clock:
 * the runs to create (missed-run policy applied, oldest first), which of them wait or are
 * skipped for overlap, and where the schedule goes next. Pure: the poller executes the plan in
 * one transaction.
 */
export function planDispatch(
  schedule: Schedule,
  dueAt: Date,
  now: Date,
  runs: ActiveRuns,
): DispatchPlan {
  const instants = dueInstants(schedule, dueAt, now);
  const planned: PlannedOccurrence[] = [];
  const toRun: Array<{
    occurrence: Occurrence;
    coalesced?: Occurrence[];
    coalescedExtra?: number;
  }> = [];
  const skipped: Array<{ occurrence: Occurrence; reason: SkipReason }> = [];
  const { list, olderUncounted } = instants;
  const latest = list[list.length - 1];
  const missed = list.slice(0, -1);

  if (latest) {
    switch (schedule.missedRunPolicy) {
      case 'latest':
        toRun.push({ occurrence: latest, coalesced: missed, coalescedExtra: olderUncounted });
        for (const occurrence of missed) skipped.push({ occurrence, reason: 'coalesced' });
        break;
      case 'skip':
        for (const occurrence of missed) skipped.push({ occurrence, reason: 'missed' });
        if (now.getTime() - latest.at.getTime() <= SKIP_GRACE_MS || missed.length === 0) {
          toRun.push({ occurrence: latest });
        } else {
          skipped.push({ occurrence: latest, reason: 'missed' });
        }
        break;
      case 'all': {
        const keep = list.slice(-schedule.maxCatchUp);
        for (const occurrence of list.slice(0, list.length - keep.length)) {
          skipped.push({ occurrence, reason: 'missed' });
        }
        for (const occurrence of keep) toRun.push({ occurrence });
        break;
      }
    }
  }

  for (const { occurrence, reason } of skipped.slice(-MAX_SKIPPED_ROWS)) {
    planned.push(row(schedule, occurrence, 'SKIPPED', reason, false));
  }
  let active = runs.active;
  let waiting = runs.waiting;
  const catchUp = toRun.length > 1;
  // maxRuns: only what is left of it runs, oldest first; the schedule completes when it is met.
  const left = schedule.maxRuns === null ? Infinity : schedule.maxRuns - schedule.runCount;
  let runsCreated = 0;
  for (const { occurrence, coalesced, coalescedExtra } of toRun) {
    if (runsCreated >= left) break;
    if (pastStartDeadline(schedule, occurrence, now)) {
      // Late is worse than never for this schedule: recorded, never called.
      planned.push(row(schedule, occurrence, 'SKIPPED', 'deadline_exceeded', false));
      continue;
    }
    const run = row(schedule, occurrence, 'QUEUED', null, true);
    if (coalesced && coalesced.length > 0) {
      run.coalescedCount = coalesced.length + (coalescedExtra ?? 0);
      run.coalescedFirst = coalesced[0].at;
      run.coalescedLast = coalesced[coalesced.length - 1].at;
    }
    switch (planNewRun(schedule.overlapPolicy, { active, waiting }, catchUp)) {
      case 'queue':
        break;
      case 'wait':
        run.reason = 'waiting_for_previous';
        run.publish = false;
        waiting++;
        break;
      case 'skip':
        run.state = 'SKIPPED';
        run.reason = 'overlap';
        run.publish = false;
        break;
    }
    active = true;
    if (run.state === 'QUEUED') runsCreated++;
    planned.push(run);
  }
  planned.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
  if (runsCreated >= left) {
    return { occurrences: planned, nextDueAt: null, status: 'completed', runsCreated };
  }
  return { occurrences: planned, ...next(schedule, now), runsCreated };
}

function pastStartDeadline(schedule: Schedule, occurrence: Occurrence, now: Date): boolean {
  const deadline = schedule.startDeadlineSeconds;
  return deadline !== null && now.getTime() > occurrence.at.getTime() + deadline * 1000;
}

function dueInstants(
  schedule: Schedule,
  dueAt: Date,
  now: Date,
): { list: Occurrence[]; olderUncounted: number } {
  const { timing } = schedule;
  if (timing.kind === 'once') {
    const due = timing.runAt.getTime() === dueAt.getTime() && dueAt <= now;
    return { list: due ? [{ at: dueAt, local: toLocalIso(dueAt, 'UTC') }] : [], olderUncounted: 0 };
  }
  const spec = recurrenceSpec(schedule)!;
  const from = new Date(dueAt.getTime() - 1);
  const window = occurrencesBetween(spec, from, now, MAX_INSTANTS_PER_ENTRY);
  if (!window.truncated) return { list: window.occurrences, olderUncounted: 0 };
  // A long outage: keep the most recent instants; the older ones are only counted (a lower
  // bound), so the work per entry stays bounded however long the poller was away.
  for (const spanMs of [3_600_000, 60_000, 1_000]) {
    const recent = occurrencesBetween(
      spec,
      new Date(now.getTime() - spanMs),
      now,
      MAX_INSTANTS_PER_ENTRY,
    );
    if (!recent.truncated) {
      return { list: recent.occurrences, olderUncounted: window.occurrences.length };
    }
  }
  return { list: window.occurrences.slice(-1), olderUncounted: window.occurrences.length };
}

function row(
  schedule: Schedule,
  occurrence: Occurrence,
  state: 'QUEUED' | 'SKIPPED',
  reason: SkipReason | null,
  publish: boolean,
): PlannedOccurrence {
  return {
    tenantId: schedule.tenantId,
    scheduleId: schedule.id,
    revision: schedule.revision,
    scheduledAt: occurrence.at,
    scheduledLocal: occurrence.local,
    state,
    reason,
    trigger: 'schedule',
    maxAttempts: schedule.retryPolicy.maxAttempts,
    retryDeadlineSeconds: schedule.retryPolicy.retryDeadlineSeconds,
    priority: schedule.priority,
    startDeadlineSeconds: schedule.startDeadlineSeconds,
    publish,
  };
}

function next(schedule: Schedule, now: Date): { nextDueAt: Date | null; status: ScheduleStatus } {
  if (schedule.timing.kind === 'once') return { nextDueAt: null, status: 'completed' };
  const upcoming = nextOccurrence(recurrenceSpec(schedule)!, now);
  return upcoming
    ? { nextDueAt: upcoming.at, status: 'active' }
    : { nextDueAt: null, status: 'completed' };
}
