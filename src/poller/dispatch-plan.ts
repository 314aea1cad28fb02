import type { NewOccurrence } from '../occurrences';
import { planNewRun, type ActiveRuns } from '../overlap';
import { nextOccurrence, Occurrence, occurrencesBetween, toLocalIso } from '../recurrence';
import type { SkipReason } from '../run-vocabulary';
import {
  plannedFireAt,
  recurrenceSpec,
  type DispatchSchedule,
  type ScheduleStatus,
} from '../schedules';

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
  /** The schedule's next nominal instant. */
  nextDueAt: Date | null;
  /** When its due-index entry comes due: the next run's planned fire instant. */
  nextFiresAt: Date | null;
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
  schedule: DispatchSchedule,
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
    return {
      occurrences: planned,
      nextDueAt: null,
      nextFiresAt: null,
      status: 'completed',
      runsCreated,
    };
  }
  return { occurrences: planned, ...next(schedule, now, instants.after), runsCreated };
}

/** The start deadline runs from the planned fire instant (the nominal one without a window). */
function pastStartDeadline(schedule: DispatchSchedule, occurrence: Occurrence, now: Date): boolean {
  const deadline = schedule.startDeadlineSeconds;
  return (
    deadline !== null && now.getTime() > firesAt(schedule, occurrence).getTime() + deadline * 1000
  );
}

function firesAt(schedule: DispatchSchedule, occurrence: Occurrence): Date {
  return plannedFireAt(schedule.id, occurrence.at, schedule.flexibleWindowSeconds);
}

/**
 * The nominal instants the entry stands for, oldest first, and after which instant the next one
 * is to be looked for. An entry comes due at its run's planned fire instant, up to the flexible
 * window after the nominal one (always shorter than a gap between two runs), so the instants
 * are read from a window before the entry's instant; one whose planned fire instant has not come
 * yet is left for the next entry: a run never fires before its planned instant.
 */
function dueInstants(
  schedule: DispatchSchedule,
  dueAt: Date,
  now: Date,
): { list: Occurrence[]; olderUncounted: number; after: Date } {
  const { timing } = schedule;
  const windowMs = schedule.flexibleWindowSeconds * 1000;
  if (timing.kind === 'once') {
    const fire = firesAt(schedule, { at: timing.runAt, local: '' });
    const due = fire.getTime() === dueAt.getTime() && dueAt <= now;
    const list = due ? [{ at: timing.runAt, local: toLocalIso(timing.runAt, 'UTC') }] : [];
    return { list, olderUncounted: 0, after: now };
  }
  const spec = recurrenceSpec(schedule)!;
  const from = new Date(dueAt.getTime() - windowMs - 1);
  const fired = (list: Occurrence[]) =>
    windowMs === 0 ? list : list.filter((o) => firesAt(schedule, o) <= now);
  const found = (list: Occurrence[], olderUncounted: number) => {
    const due = fired(list);
    // Without a window, the next instant is the first after now, as it always was.
    const after = windowMs === 0 ? now : (due[due.length - 1]?.at ?? from);
    return { list: due, olderUncounted, after };
  };
  const window = occurrencesBetween(spec, from, now, MAX_INSTANTS_PER_ENTRY);
  if (!window.truncated) return found(window.occurrences, 0);
  // A long outage: keep the most recent instants; the older ones are only counted (a lower
  // bound), so the work per entry stays bounded however long the poller was away.
  for (const spanMs of [3_600_000, 60_000, 1_000]) {
    const recent = occurrencesBetween(
      spec,
      new Date(now.getTime() - spanMs),
      now,
      MAX_INSTANTS_PER_ENTRY,
    );
    if (!recent.truncated) return found(recent.occurrences, window.occurrences.length);
  }
  return found(window.occurrences.slice(-1), window.occurrences.length);
}

function row(
  schedule: DispatchSchedule,
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
    firesAt: firesAt(schedule, occurrence),
    publish,
  };
}

function next(
  schedule: DispatchSchedule,
  now: Date,
  after: Date,
): { nextDueAt: Date | null; nextFiresAt: Date | null; status: ScheduleStatus } {
  if (schedule.timing.kind === 'once') {
    return { nextDueAt: null, nextFiresAt: null, status: 'completed' };
  }
  const upcoming = nextOccurrence(recurrenceSpec(schedule)!, after);
  return upcoming
    ? { nextDueAt: upcoming.at, nextFiresAt: firesAt(schedule, upcoming), status: 'active' }
    : { nextDueAt: null, nextFiresAt: null, status: 'completed' };
}
