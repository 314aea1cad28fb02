import type { OverlapPolicy } from '../overlap';
import type { RunPriority } from '../run-vocabulary';
import type { DstPolicy } from '../recurrence';
import type {
  DispatchSchedule,
  MissedRunPolicy,
  PauseReason,
  Schedule,
  ScheduleDefinition,
  ScheduleStatus,
  Timing,
} from './schedule';
import { ScheduleEntity } from './schedule.entity';

/** Column values for a definition (the part of a row a tenant controls). */
export function definitionColumns(definition: ScheduleDefinition): Partial<ScheduleEntity> {
  const { timing, retryPolicy } = definition;
  return {
    name: definition.name,
    targetId: definition.targetId,
    payload: definition.payload,
    kind: timing.kind,
    runAt: timing.kind === 'once' ? timing.runAt : null,
    cron: timing.kind === 'cron' ? timing.cron : null,
    timezone: timing.kind === 'once' ? null : timing.timezone,
    everySeconds: timing.kind === 'interval' ? timing.everySeconds : null,
    anchorAt: timing.kind === 'interval' ? timing.anchorAt : null,
    labels: definition.labels,
    excludedDates: definition.excludedDates,
    calendarId: definition.calendarId,
    maxRuns: definition.maxRuns,
    pauseAfterFailures: definition.pauseAfterConsecutiveFailures,
    lateAfterSeconds: definition.lateAfterSeconds,
    dstNonexistent: timing.kind === 'cron' ? timing.dstPolicy.nonexistent : 'skip',
    dstRepeated: timing.kind === 'cron' ? timing.dstPolicy.repeated : 'first',
    startAt: definition.startAt,
    endAt: definition.endAt,
    missedRunPolicy: definition.missedRunPolicy,
    maxCatchUp: definition.maxCatchUp,
    overlapPolicy: definition.overlapPolicy,
    priority: definition.priority,
    startDeadlineSeconds: definition.startDeadlineSeconds,
    flexibleWindowSeconds: definition.flexibleWindowSeconds,
    retryMaxAttempts: retryPolicy.maxAttempts,
    retryInitialDelayMs: retryPolicy.initialDelayMs,
    retryMaxDelayMs: retryPolicy.maxDelayMs,
    retryDeadlineSeconds: retryPolicy.retryDeadlineSeconds,
  };
}

export function toSchedule(row: ScheduleEntity): Schedule {
  return {
    ...toDispatchSchedule(row),
    payload: row.payload as Record<string, unknown>,
    labels: row.labels as Record<string, string>,
  };
}

/** A schedule as the poller reads it to dispatch (LOCK_SCHEDULES_FOR_DISPATCH's columns). */
export function toDispatchSchedule(row: ScheduleEntity): DispatchSchedule {
  return {
    id: row.id,
    tenantId: row.tenantId,
    revision: row.revision,
    status: row.status as ScheduleStatus,
    name: row.name,
    targetId: row.targetId,
    timing: timingOf(row),
    excludeDates: row.calendarId ? [] : row.excludedDates,
    calendarId: row.calendarId,
    excludedDates: row.excludedDates,
    maxRuns: row.maxRuns,
    pauseAfterConsecutiveFailures: row.pauseAfterFailures,
    lateAfterSeconds: row.lateAfterSeconds,
    runCount: row.runCount,
    pausedReason: row.pausedReason as PauseReason | null,
    pausedNote: row.pausedNote,
    startAt: row.startAt,
    endAt: row.endAt,
    missedRunPolicy: row.missedRunPolicy as MissedRunPolicy,
    maxCatchUp: row.maxCatchUp,
    overlapPolicy: row.overlapPolicy as OverlapPolicy,
    priority: row.priority as RunPriority,
    startDeadlineSeconds: row.startDeadlineSeconds,
    flexibleWindowSeconds: row.flexibleWindowSeconds,
    retryPolicy: {
      maxAttempts: row.retryMaxAttempts,
      initialDelayMs: row.retryInitialDelayMs,
      maxDelayMs: row.retryMaxDelayMs,
      retryDeadlineSeconds: row.retryDeadlineSeconds,
    },
    nextDueAt: row.nextDueAt,
    traceParent: row.traceParent ?? null,
    createdByApiKeyId: row.createdByKeyId ?? null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

function timingOf(row: ScheduleEntity): Timing {
  switch (row.kind) {
    case 'once':
      return { kind: 'once', runAt: row.runAt! };
    case 'interval':
      return {
        kind: 'interval',
        everySeconds: row.everySeconds!,
        anchorAt: row.anchorAt!,
        timezone: row.timezone!,
      };
    default:
      return {
        kind: 'cron',
        cron: row.cron!,
        timezone: row.timezone!,
        dstPolicy: {
          nonexistent: row.dstNonexistent as DstPolicy['nonexistent'],
          repeated: row.dstRepeated as DstPolicy['repeated'],
        },
      };
  }
}
