import { inSpan, SpanKind, traceparentOf } from '../tracing';
import { Injectable, Logger } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { CalendarsService } from '../calendars';
import {
  Clock,
  ConflictError,
  NotFoundError,
  pageSize,
  StaleRevisionError,
  ValidationError,
} from '../common';
import { Transactions, type Tx } from '../database';
import { DueIndexRepository } from '../due-index';
import { EventsService } from '../events';
import { LoadProfileService, projectLoad } from '../load-profile';
import { OccurrencesService, type NewOccurrence, type Run } from '../occurrences';
import { DstPolicy, nextOccurrences, Occurrence, toLocalIso } from '../recurrence';
import { TargetsService } from '../targets';
import type { Tenant } from '../tenants';
import {
  DispatchSchedule,
  LIVE_STATUSES,
  PauseReason,
  Schedule,
  ScheduleDefinition,
  ScheduleStatus,
} from './schedule';
import { CreateOutcome, CreateRequest, ScheduleCreator } from './schedule-creator';
import {
  buildDefinition,
  nextDueAfter,
  recurrenceSpec,
  ScheduleInput,
} from './schedule-definition';
import { SCHEDULE_LIMITS } from './schedule-limits';
import {
  changeKind,
  changesBetween,
  creationRevisionOf,
  snapshotOf,
  SYSTEM_ACTOR,
  type Actor,
  type RevisionChange,
  type RevisionPage,
  type ScheduleRevision,
} from './schedule-revision';
import { ScheduleRevisionsRepository } from './schedule-revisions.repository';
import { plannedFireAt } from './fire-window';
import { loadSourceOf } from './schedule-load';
import { ScheduleQuotaRepository, type SlotRelease } from './schedule-quota.repository';
import {
  ListPage,
  ScheduleAdvance,
  SchedulesRepository,
  type TriggerSchedule,
} from './schedules.repository';

export type ScheduleEdit = Partial<Omit<ScheduleInput, 'name' | 'targetId'>> & {
  name?: string;
  targetId?: string;
  status?: 'active' | 'paused' | 'cancelled';
};

/** An instant of a schedule's preview, with when its run is planned to fire. */
export interface PlannedInstant extends Occurrence {
  firesAt: Date;
}

export interface PreviewRequest {
  cron?: string | null;
  every?: number | null;
  anchorAt?: Date | null;
  excludeDates?: string[] | null;
  calendarId?: string | null;
  maxRuns?: number | null;
  timezone?: string | null;
  dstPolicy?: Partial<DstPolicy>;
  from?: Date;
  count: number;
  startAt?: Date | null;
  endAt?: Date | null;
}

/** The edit a change function decides on. */
interface ScheduleChange {
  definition: ScheduleDefinition;
  status: ScheduleStatus;
  nextDueAt: Date | null;
  /** What the revision records as its kind when not inferred (an auto-pause), and why. */
  change?: RevisionChange;
  note?: string;
  pausedReason?: PauseReason;
}

@Injectable()
export class SchedulesService {
  private readonly logger = new Logger(SchedulesService.name);

  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly creator: ScheduleCreator,
    private readonly quota: ScheduleQuotaRepository,
    private readonly transactions: Transactions,
    private readonly dueIndex: DueIndexRepository,
    private readonly targets: TargetsService,
    private readonly occurrences: OccurrencesService,
    private readonly admission: AdmissionService,
    private readonly calendars: CalendarsService,
    private readonly revisionLog: ScheduleRevisionsRepository,
    private readonly load: LoadProfileService,
    private readonly events: EventsService,
    private readonly clock: Clock,
  ) {}

  /**
   * Accepts a schedule only once it is durable: the 201 is sent after the schedule row, its
   * due-index entry and its quota slot commit. `created` is false when the Idempotency-Key
   * replayed an earlier answer. A refusal rolls the key back too, so the client may retry.
   */
  async create(
    tenant: Tenant,
    idempotencyKey: string,
    requestBody: unknown,
    input: ScheduleInput,
    actor: Actor,
  ): Promise<{ schedule: Schedule; created: boolean }> {
    return inSpan('schedule.create', { kind: SpanKind.SERVER }, async (span) => {
      const outcome = await this.creator.createOne(tenant, {
        idempotencyKey,
        requestBody,
        input,
        actor,
        traceParent: traceparentOf(span),
      });
      if (outcome.error) throw outcome.error;
      span.setAttribute('dueline.schedule_id', outcome.schedule.id);
      return outcome;
    });
  }

  /**
   * Creates up to SCHEDULE_LIMITS.maxBatchItems schedules, each atomic on its own and answered
   * in request order: the same rules, keys and quota as one create, in one transaction.
   */
  /** Each request carries its actor (the API key that sent the batch). */
  createBatch(tenant: Tenant, requests: readonly CreateRequest[]): Promise<CreateOutcome[]> {
    if (requests.length > SCHEDULE_LIMITS.maxBatchItems) {
      throw new ValidationError(`a batch holds at most ${SCHEDULE_LIMITS.maxBatchItems} items`);
    }
    return inSpan('schedule.create_batch', { kind: SpanKind.SERVER }, (span) => {
      const traceParent = traceparentOf(span);
      return this.creator.create(
        tenant,
        requests.map((request) => ({ ...request, traceParent })),
      );
    });
  }

  /** How many of the tenant's schedules count against maxActiveSchedules (active, paused). */
  liveCount(tenantId: string): Promise<number> {
    return this.quota.liveCount(tenantId);
  }

  /** Forgets Idempotency-Keys older than 24 hours, at most `limit` per call. */
  pruneIdempotencyKeys(limit: number): Promise<number> {
    return this.schedules.pruneIdempotencyKeys(limit);
  }

  async get(tenantId: string, id: string): Promise<Schedule> {
    const schedule = await this.schedules.findById(tenantId, id);
    if (!schedule) throw new NotFoundError('schedule', id);
    return schedule;
  }

  list(
    tenantId: string,
    options: {
      status?: ScheduleStatus;
      labels?: Record<string, string>;
      limit?: number;
      afterId?: string;
    },
  ): Promise<ListPage> {
    return this.schedules.list(tenantId, { ...options, limit: pageSize(options.limit) });
  }

  /**
   * Edits, pauses, resumes or cancels, only from the revision the caller read. Cancelled and
   * completed schedules are terminal: any further edit is a conflict.
   */
  async update(
    tenantId: string,
    id: string,
    ifMatch: number,
    edit: ScheduleEdit,
    actor: Actor,
  ): Promise<Schedule> {
    const now = this.clock.now();
    const targetId = edit.targetId;
    const calendarDates =
      edit.calendarId && !edit.excludeDates?.length
        ? await this.calendarDates(tenantId, edit.calendarId)
        : undefined;
    // The target is locked before the schedule, in the order a create takes them.
    const guard = async (tx: Tx) => {
      if (targetId !== undefined) await this.targets.assertUsable(tenantId, targetId, tx);
    };
    const change = async (current: Schedule): Promise<ScheduleChange> => {
      assertEditable(current);
      const { status: requested, ...changes } = edit;
      const status = requested ?? current.status;
      const definitionChanged = Object.keys(changes).length > 0;
      const definition = definitionChanged
        ? buildDefinition({ ...mergeEdit(toInput(current), changes), calendarDates }, now)
        : current;
      if (definition.maxRuns !== null && definition.maxRuns <= current.runCount) {
        throw new ValidationError('the schedule is invalid', [
          {
            field: 'maxRuns',
            message: `maxRuns must be more than the ${current.runCount} runs already created`,
          },
        ]);
      }
      // Resuming an unchanged schedule picks up where the pause began: the instants missed
      // while paused come due at once, and the poller applies the missed-run policy to them.
      const resumed = current.status === 'paused' && status === 'active' && !definitionChanged;
      const from = resumed ? current.updatedAt : now;
      return {
        definition,
        status,
        nextDueAt: status === 'active' ? nextDueAfter(definition, from) : null,
      };
    };
    return this.afterEdit(await this.edit(tenantId, id, ifMatch, actor, change, guard));
  }

  /** DELETE: cancels for good; the schedule and its history stay readable. */
  async cancel(
    tenantId: string,
    id: string,
    ifMatch: number | null,
    actor: Actor,
  ): Promise<Schedule> {
    const schedule = await this.edit(tenantId, id, ifMatch, actor, async (current) => {
      assertEditable(current);
      return { definition: current, status: 'cancelled', nextDueAt: null };
    });
    return this.afterEdit(schedule);
  }

  /** A schedule's revisions, newest first: who changed what, when, and the definition left. */
  async revisions(
    tenantId: string,
    id: string,
    page: { limit?: number; afterId?: string },
  ): Promise<RevisionPage> {
    // The schedule before its history: an edit that commits in between writes revision 1 into
    // the history with its own, so a schedule read at revision 1 whose history holds no revision
    // 1 was still that revision when the history was read (see creationRevisionOf).
    const schedule = await this.get(tenantId, id);
    const limit = pageSize(page.limit);
    const rows = await this.revisionLog.list(tenantId, id, limit + 1, page.afterId ?? null);
    if (schedule.revision === 1 && !page.afterId && !rows.some((r) => r.revision === 1)) {
      rows.push(creationRevisionOf(schedule));
    }
    const items = rows.slice(0, limit);
    return { items, nextAfterId: rows.length > limit ? items[items.length - 1].id : null };
  }

  /** One revision: the definition a run of that revision ran under. */
  async revision(tenantId: string, id: string, revision: number): Promise<ScheduleRevision> {
    // Revision 1: the schedule first, as in revisions().
    const schedule = revision === 1 ? await this.schedules.findById(tenantId, id) : null;
    const found = await this.revisionLog.find(tenantId, id, revision);
    if (found) return found;
    if (schedule?.revision === 1) return creationRevisionOf(schedule);
    throw new NotFoundError('schedule revision', `${id}@${revision}`);
  }

  /**
   * A cancelled schedule's waiting runs end CANCELLED and its running ones are asked to stop.
   * After the schedule's commit: from then on no claim of its runs succeeds (the claim reads the
   * schedule's status), so a crash between the two leaves nothing that could still start.
   */
  private async afterEdit(schedule: Schedule): Promise<Schedule> {
    if (schedule.status === 'cancelled') {
      await this.occurrences.cancelForSchedule(schedule.tenantId, schedule.id);
    }
    return schedule;
  }

  /**
   * The next instants of a recurrence that is not stored yet: exactly what a schedule with these
   * fields would run (DST policy, excluded dates or calendar, bounds and maxRuns applied).
   */
  async preview(tenantId: string, request: PreviewRequest): Promise<Occurrence[]> {
    const calendarDates =
      request.calendarId && !request.excludeDates?.length
        ? await this.calendarDates(tenantId, request.calendarId)
        : undefined;
    const definition = buildDefinition(
      {
        name: 'preview',
        targetId: 'preview',
        cron: request.cron,
        every: request.every,
        anchorAt: request.anchorAt,
        timezone: request.timezone,
        dstPolicy: request.dstPolicy,
        startAt: request.startAt,
        endAt: request.endAt,
        excludeDates: request.excludeDates,
        calendarId: request.calendarId,
        calendarDates,
        maxRuns: request.maxRuns,
      },
      this.clock.now(),
    );
    const count = Math.min(
      request.count,
      definition.maxRuns ?? Infinity,
      SCHEDULE_LIMITS.maxPreviewCount,
    );
    return nextOccurrences(recurrenceSpec(definition)!, request.from ?? this.clock.now(), count);
  }

  /** The dates of one of the tenant's calendars; another tenant's is not found. */
  private async calendarDates(tenantId: string, calendarId: string): Promise<string[]> {
    const dates = (await this.calendars.datesOf(tenantId, [calendarId])).get(calendarId);
    if (!dates) throw new NotFoundError('calendar', calendarId);
    return dates;
  }

  /** The schedule's next instants, each with its planned fire instant (its flexible window). */
  async previewSchedule(tenantId: string, id: string, count: number): Promise<PlannedInstant[]> {
    const schedule = await this.get(tenantId, id);
    const now = this.clock.now();
    if (schedule.status === 'cancelled' || schedule.status === 'completed') return [];
    const planned = (o: Occurrence): PlannedInstant => ({
      ...o,
      firesAt: plannedFireAt(schedule.id, o.at, schedule.flexibleWindowSeconds),
    });
    if (schedule.timing.kind === 'once') {
      const runAt = schedule.timing.runAt;
      return runAt > now ? [planned({ at: runAt, local: toLocalIso(runAt, 'UTC') })] : [];
    }
    const spec = recurrenceSpec(schedule)!;
    const left = schedule.maxRuns === null ? Infinity : schedule.maxRuns - schedule.runCount;
    return nextOccurrences(
      spec,
      now,
      Math.max(0, Math.min(count, left, SCHEDULE_LIMITS.maxPreviewCount)),
    ).map(planned);
  }

  /**
   * One manual occurrence at the database's now(), recorded and published in one transaction
   * under the schedule's current revision. Two triggers within one millisecond would share an
   * identity, so the later one simply tries again at a later instant.
   */
  async trigger(tenantId: string, scheduleId: string): Promise<Run> {
    // The run's trace: its root is this span, whose traceparent the run keeps.
    return inSpan('run.trigger', { kind: SpanKind.SERVER }, async (span) => {
      const run = await this.triggerOnce(tenantId, scheduleId, traceparentOf(span));
      span.setAttributes({ 'dueline.schedule_id': scheduleId, 'dueline.run_id': run.id });
      return run;
    });
  }

  private async triggerOnce(
    tenantId: string,
    scheduleId: string,
    traceParent: string | null,
  ): Promise<Run> {
    for (let round = 0; round < 3; round++) {
      const run = await this.transactions.run(async (tx) => {
        const schedule = await this.schedules.lockForTrigger(tx, tenantId, scheduleId);
        if (!schedule) throw new NotFoundError('schedule', scheduleId);
        if (schedule.status === 'cancelled') {
          throw new ConflictError(`schedule ${scheduleId} is cancelled; it can no longer run`, {
            currentStatus: schedule.status,
          });
        }
        return this.recordManualRun(tx, schedule, traceParent);
      });
      if (run) {
        this.logger.log({ tenantId, scheduleId, runId: run.id }, 'manual run triggered');
        return run;
      }
    }
    throw new ConflictError(
      'another manual run of this schedule was triggered at the same instant; try again',
    );
  }

  /**
   * For runs created outside the poller (replays, backfills): the tenant's schedules, read and
   * held FOR SHARE until the caller's commit, so their revision cannot change meanwhile.
   */
  lockForRuns(tx: Tx, tenantId: string, ids: readonly string[]): Promise<Map<string, Schedule>> {
    return this.schedules.lockForRuns(tx, tenantId, ids);
  }

  /**
   * Auto-pause: pauses the active schedules whose last pauseAfterConsecutiveFailures runs
   * (finished since the count began) all ended FAILED or UNKNOWN, looking at those with a
   * failure finished at or after `since`. Each pause is an ordinary edit by dueline (revision
   * `auto_paused`, no API key, a note naming the runs) that re-checks the streak under the
   * schedule's lock, so any number of replicas racing pause a schedule once. Resuming is a PATCH
   * with If-Match, which starts the count again. Returns the schedules paused.
   */
  async autoPauseFailing(since: Date, limit = 100): Promise<Schedule[]> {
    const paused: Schedule[] = [];
    for (const candidate of await this.schedules.toAutoPause(since, limit)) {
      const schedule = await this.autoPause(candidate.tenantId, candidate.id);
      if (schedule) paused.push(schedule);
    }
    return paused;
  }

  private async autoPause(tenantId: string, id: string): Promise<Schedule | null> {
    try {
      const schedule = await this.edit(tenantId, id, null, SYSTEM_ACTOR, async (current, tx) => {
        const streak = await this.schedules.autoPauseStreak(tx, id);
        if (!streak) throw new NothingToDo();
        return {
          definition: current,
          status: 'paused',
          nextDueAt: null,
          change: 'auto_paused',
          pausedReason: 'consecutive_failures',
          note:
            `paused after ${streak.length} consecutive runs ended FAILED or UNKNOWN: ` +
            streak.join(', '),
        };
      });
      this.logger.warn(
        { tenantId, scheduleId: id, revision: schedule.revision },
        'schedule auto-paused after consecutive failures',
      );
      return schedule;
    } catch (error) {
      // Another replica paused it first, or a success or an edit came in between.
      if (error instanceof NothingToDo) return null;
      throw error;
    }
  }

  /** The poller's side of dispatch: lock the due schedules (edits are skipped), then advance. */
  lockForDispatch(tx: Tx, ids: readonly string[]): Promise<Map<string, DispatchSchedule>> {
    return this.schedules.lockForDispatch(tx, ids);
  }

  /**
   * Returns the quota slots of the schedules that completed: pass them to releaseSlots as the
   * last statement before the commit, so the tenants' counters are locked only until then.
   */
  async advanceAfterDispatch(tx: Tx, changes: readonly ScheduleAdvance[]): Promise<SlotRelease> {
    // A schedule that will not fire again no longer adds to its tenant's projected load. Which
    // ones those are is the plan's: the dispatch holds their rows at the revision it planned
    // (lockForDispatch), so the advance writes every one of them, and the two statements go
    // together, one wait.
    const ending = changes.filter((change) => !isLive(change.status)).map((change) => change.id);
    const [{ slots }] = await Promise.all([
      this.schedules.advance(tx, changes),
      this.load.release(tx, ending),
    ]);
    return slots;
  }

  /** Written as the transaction's last statements; its commit goes with them (see the quota). */
  releaseSlots(tx: Tx, released: SlotRelease): void {
    this.quota.release(tx, released);
  }

  private async recordManualRun(
    tx: Tx,
    schedule: TriggerSchedule,
    traceParent: string | null,
  ): Promise<Run | null> {
    const run: NewOccurrence = {
      tenantId: schedule.tenantId,
      scheduleId: schedule.id,
      revision: schedule.revision,
      scheduledAt: schedule.dbNow,
      scheduledLocal: toLocalIso(schedule.dbNow, schedule.timezone ?? 'UTC'),
      state: 'QUEUED',
      reason: null,
      trigger: 'manual',
      maxAttempts: schedule.maxAttempts,
      retryDeadlineSeconds: schedule.retryDeadlineSeconds,
      priority: schedule.priority,
      startDeadlineSeconds: schedule.startDeadlineSeconds,
      traceParent,
    };
    // Through admission like any run: it waits if its tenant cannot afford it now.
    await this.admission.decideNew(tx, [run]);
    const [inserted] = await this.occurrences.insert(tx, [run]);
    if (!inserted) return null;
    if (run.admitted) {
      await this.admission.admitted(tx, [
        {
          runId: inserted.id,
          tenantId: schedule.tenantId,
          scheduledAt: inserted.scheduledAt,
          priority: schedule.priority,
        },
      ]);
    }
    return this.occurrences.find(schedule.tenantId, inserted.id, tx);
  }

  /**
   * Applies an edit only if the caller read the current revision (optimistic concurrency with
   * the row held FOR UPDATE), bumps the revision and rewrites the due-index entry for the new
   * revision, all in one transaction. `change` may throw a domain error to refuse the edit.
   */
  /**
   * An edit replaces what the schedule adds to its tenant's projected load: nothing once it is
   * paused or ends; an edit that would overload a minute is refused (422) and writes nothing.
   */
  private async projectLoad(
    tx: Tx,
    tenantId: string,
    scheduleId: string,
    next: ScheduleChange,
  ): Promise<void> {
    const load =
      next.status === 'active'
        ? projectLoad(loadSourceOf(next.definition), this.clock.now())
        : null;
    const [refused] = await this.load.replace(tx, tenantId, [{ scheduleId, load }]);
    if (refused) throw refused;
  }

  private edit(
    tenantId: string,
    id: string,
    expectedRevision: number | null,
    actor: Actor,
    change: (current: Schedule, tx: Tx) => Promise<ScheduleChange>,
    guard?: (tx: Tx) => Promise<void>,
  ): Promise<Schedule> {
    return this.transactions.run(async (tx) => {
      await guard?.(tx);
      const current = await this.schedules.lockForEdit(tx, tenantId, id);
      if (!current) throw new NotFoundError('schedule', id);
      if (expectedRevision !== null && current.revision !== expectedRevision) {
        throw new StaleRevisionError(expectedRevision, current.revision);
      }
      const next = await change(current, tx);
      await this.projectLoad(tx, tenantId, id, next);
      const revision = await this.schedules.writeRevision(tx, current, next);
      const before = snapshotOf(current, current.status);
      const after = snapshotOf(next.definition, next.status);
      const changes = changesBetween(before, after);
      // The first edit: revision 1 leaves the row for the history, as the row still has it.
      if (current.revision === 1) await this.revisionLog.keepCreation(tx, current);
      await this.revisionLog.insert(tx, [
        {
          tenantId,
          scheduleId: id,
          revision,
          change: next.change ?? changeKind(current, next.status, changes),
          changedByApiKeyId: actor.apiKeyId,
          changes,
          definition: after,
          note: next.note ?? null,
        },
      ]);
      if (next.nextDueAt && next.status === 'active') {
        await this.dueIndex.replace(tx, {
          scheduleId: id,
          tenantId,
          revision,
          // The entry comes due at the run's planned fire instant (its flexible window).
          dueAt: plannedFireAt(id, next.nextDueAt, next.definition.flexibleWindowSeconds),
        });
      } else {
        await this.dueIndex.remove(tx, id);
      }
      // A pause (by request or dueline's auto-pause) is an event for subscribers, in this edit.
      if (next.status === 'paused' && current.status !== 'paused') {
        await this.events.recordSchedulePaused(tx, tenantId, id);
      }
      const edited = (await this.schedules.findById(tenantId, id, tx))!;
      // Last, so the counter is locked only until the commit. Edits never make a schedule live
      // again (cancelled and completed are terminal), so leaving is the only move to count.
      if (isLive(current.status) && !isLive(next.status)) {
        this.quota.release(tx, new Map([[tenantId, 1]]));
      }
      return edited;
    });
  }
}

/** An auto-pause found nothing to do once it held the schedule: the edit is not written. */
class NothingToDo extends Error {}

function isLive(status: ScheduleStatus): boolean {
  return LIVE_STATUSES.includes(status);
}

function assertEditable(schedule: Schedule): void {
  if (schedule.status === 'cancelled' || schedule.status === 'completed') {
    throw new ConflictError(
      `schedule ${schedule.id} is ${schedule.status}; it can no longer change`,
      {
        currentStatus: schedule.status,
        currentRevision: schedule.revision,
      },
    );
  }
}

/**
 * An edit over the current definition: what the edit names replaces what is stored. An edit
 * that names another kind of timing (runAt, cron or every) drops the old kind's fields it does
 * not name itself, and excludeDates and calendarId replace one another.
 */
function mergeEdit(current: ScheduleInput, changes: ScheduleEdit): ScheduleInput {
  const merged: ScheduleInput = { ...current };
  if (changes.runAt != null) {
    Object.assign(merged, { cron: null, every: null, anchorAt: null, timezone: null });
    merged.dstPolicy = undefined;
    merged.excludeDates = null;
    merged.calendarId = null;
    merged.maxRuns = null;
  } else if (changes.cron != null) {
    Object.assign(merged, { runAt: null, every: null, anchorAt: null });
  } else if (changes.every != null) {
    Object.assign(merged, { runAt: null, cron: null });
    merged.dstPolicy = undefined;
  }
  if (changes.calendarId != null) merged.excludeDates = null;
  if (changes.excludeDates != null && changes.excludeDates.length > 0) {
    merged.calendarId = null;
    merged.calendarDates = undefined;
  }
  return { ...merged, ...changes };
}

function toInput(schedule: ScheduleDefinition): ScheduleInput {
  const { timing } = schedule;
  return {
    name: schedule.name,
    targetId: schedule.targetId,
    payload: schedule.payload,
    runAt: timing.kind === 'once' ? timing.runAt : null,
    cron: timing.kind === 'cron' ? timing.cron : null,
    every: timing.kind === 'interval' ? timing.everySeconds : null,
    anchorAt: timing.kind === 'interval' ? timing.anchorAt : null,
    timezone: timing.kind === 'once' ? null : timing.timezone,
    dstPolicy: timing.kind === 'cron' ? timing.dstPolicy : undefined,
    labels: schedule.labels,
    excludeDates: schedule.excludeDates,
    calendarId: schedule.calendarId,
    calendarDates: schedule.calendarId ? schedule.excludedDates : undefined,
    maxRuns: schedule.maxRuns,
    pauseAfterConsecutiveFailures: schedule.pauseAfterConsecutiveFailures,
    lateAfterSeconds: schedule.lateAfterSeconds,
    startAt: schedule.startAt,
    endAt: schedule.endAt,
    missedRunPolicy: schedule.missedRunPolicy,
    maxCatchUp: schedule.maxCatchUp,
    overlapPolicy: schedule.overlapPolicy,
    retryPolicy: schedule.retryPolicy,
    priority: schedule.priority,
    startDeadlineSeconds: schedule.startDeadlineSeconds,
    flexibleWindowSeconds: schedule.flexibleWindowSeconds,
  };
}
