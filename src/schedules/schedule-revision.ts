import type { Schedule, ScheduleDefinition, ScheduleStatus } from './schedule';

/**
 * Who made a change: the API key that called (its public id, never the key), or dueline itself
 * (apiKeyId null: an auto-pause).
 */
export interface Actor {
  apiKeyId: string | null;
}

export const SYSTEM_ACTOR: Actor = Object.freeze({ apiKeyId: null });

export const REVISION_CHANGES = [
  'created',
  'edited',
  'paused',
  'resumed',
  'cancelled',
  'auto_paused',
  /** The revision a schedule had when revision history began (the migration that added it). */
  'recorded',
] as const;
export type RevisionChange = (typeof REVISION_CHANGES)[number];

/** One field that a revision changed, with its value before and after (JSON). */
export interface FieldChange {
  field: string;
  from: unknown;
  to: unknown;
}

/** A schedule's definition and status as one revision left it. */
export type DefinitionSnapshot = Record<string, unknown>;

export interface ScheduleRevision {
  id: string;
  scheduleId: string;
  revision: number;
  change: RevisionChange;
  /** The API key that made the change; null when dueline made it (see `note`). */
  changedByApiKeyId: string | null;
  changedAt: Date;
  changes: FieldChange[];
  definition: DefinitionSnapshot;
  /** Why dueline made the change (an auto-pause says which runs failed). */
  note: string | null;
}

export interface RevisionPage {
  items: ScheduleRevision[];
  nextAfterId: string | null;
}

/** The definition as the API names its fields, so a revision reads like the schedule did. */
export function snapshotOf(
  definition: ScheduleDefinition,
  status: ScheduleStatus,
): DefinitionSnapshot {
  const { timing } = definition;
  return {
    name: definition.name,
    targetId: definition.targetId,
    payload: definition.payload,
    runAt: timing.kind === 'once' ? timing.runAt.toISOString() : null,
    cron: timing.kind === 'cron' ? timing.cron : null,
    everySeconds: timing.kind === 'interval' ? timing.everySeconds : null,
    anchorAt: timing.kind === 'interval' ? timing.anchorAt.toISOString() : null,
    timezone: timing.kind === 'once' ? null : timing.timezone,
    dstPolicy: timing.kind === 'cron' ? { ...timing.dstPolicy } : null,
    startAt: definition.startAt?.toISOString() ?? null,
    endAt: definition.endAt?.toISOString() ?? null,
    missedRunPolicy: definition.missedRunPolicy,
    maxCatchUp: definition.maxCatchUp,
    overlapPolicy: definition.overlapPolicy,
    retryPolicy: { ...definition.retryPolicy },
    priority: definition.priority,
    startDeadlineSeconds: definition.startDeadlineSeconds,
    labels: definition.labels,
    excludeDates: definition.excludeDates,
    calendarId: definition.calendarId,
    maxRuns: definition.maxRuns,
    pauseAfterConsecutiveFailures: definition.pauseAfterConsecutiveFailures,
    lateAfterSeconds: definition.lateAfterSeconds,
    status,
  };
}

/**
 * Revision 1 of a schedule still at revision 1, read off its row: a create records it there (who
 * made it, when, and the definition, which nothing changes without a new revision) and the first
 * edit writes it into the history from the row before changing it. Its id is the schedule's, the
 * same before and after that write. Creates always leave a schedule `active`.
 */
export function creationRevisionOf(schedule: Schedule): ScheduleRevision {
  if (schedule.revision !== 1) {
    throw new Error(`schedule ${schedule.id} is at revision ${schedule.revision}, not 1`);
  }
  return {
    id: schedule.id,
    scheduleId: schedule.id,
    revision: 1,
    change: 'created',
    changedByApiKeyId: schedule.createdByApiKeyId,
    changedAt: schedule.createdAt,
    changes: [],
    definition: snapshotOf(schedule, 'active'),
    note: null,
  };
}

/** The fields whose values differ, in snapshot order. */
export function changesBetween(
  before: DefinitionSnapshot,
  after: DefinitionSnapshot,
): FieldChange[] {
  const changes: FieldChange[] = [];
  for (const field of Object.keys(after)) {
    if (JSON.stringify(before[field]) !== JSON.stringify(after[field])) {
      changes.push({ field, from: before[field] ?? null, to: after[field] });
    }
  }
  return changes;
}

/** What kind of change an edit from `current` to `status` with these field changes is. */
export function changeKind(
  current: Schedule,
  status: ScheduleStatus,
  changes: FieldChange[],
): RevisionChange {
  if (status === 'cancelled') return 'cancelled';
  const onlyStatus = changes.every((c) => c.field === 'status');
  if (onlyStatus && current.status === 'active' && status === 'paused') return 'paused';
  if (onlyStatus && current.status === 'paused' && status === 'active') return 'resumed';
  return 'edited';
}
