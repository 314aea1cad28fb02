import { Injectable, Logger } from '@nestjs/common';
import { AdmissionService } from '../admission';
import {
  canonicalSha256,
  Clock,
  ConflictError,
  errorSummary,
  IdempotencyKeyReusedError,
  NotFoundError,
  ValidationError,
} from '../common';
import type { Tx } from '../database';
import { OccurrencesService, type NewOccurrence } from '../occurrences';
import type { Schedule } from '../schedules';
import { SchedulesService } from '../schedules';
import {
  BACKFILL_LIMITS,
  INSTANT_ACTION_CODES,
  type Backfill,
  type BackfillRequest,
  type InstantAction,
  type InstantOutcome,
  type PlannedInstant,
} from './backfill';
import { actionFor, backfillInstants, dispatchFrontier, planInstants } from './backfill-plan';
import {
  BackfillsRepository,
  type PendingInstant,
  type StoredBackfill,
} from './backfills.repository';

export interface BackfillCreated {
  backfill: Backfill;
  /** False when the Idempotency-Key replayed an earlier request's backfill. */
  created: boolean;
}

/**
 * Backfills: a schedule's past instants run again, as runs marked `trigger: backfill`. The plan
 * is taken once (the exact instants, DST policy applied, and what happens to each; a dry run
 * answers it and writes nothing). Its runs are then created a few at a time (at most
 * maxConcurrent active at once, one at a time unless the overlap policy allows more), each
 * through admission like any run, by the replica that created it and then by the relay.
 *
 * Identity: a backfilled run's identity is (schedule, revision, instant, backfill id), so it
 * never collides with the scheduled run of the same instant (origin '') nor with another
 * backfill's; and because instants at or after the point the poller has reached are left to
 * the schedule, the two never both run an instant that had no run.
 */
@Injectable()
export class BackfillsService {
  private readonly logger = new Logger(BackfillsService.name);

  constructor(
    private readonly backfills: BackfillsRepository,
    private readonly schedules: SchedulesService,
    private readonly occurrences: OccurrencesService,
    private readonly admission: AdmissionService,
    private readonly clock: Clock,
  ) {}

  /** The exact instants and what would happen to each; nothing is written. */
  async dryRun(
    tenantId: string,
    scheduleId: string,
    request: BackfillRequest,
  ): Promise<PlannedInstant[]> {
    return this.backfills.transaction(async (tx) => {
      const schedule = await this.lockSchedule(tx, tenantId, scheduleId);
      return this.plan(tx, schedule, request);
    });
  }

  async create(
    tenantId: string,
    scheduleId: string,
    request: BackfillRequest,
    idempotencyKey: string,
    requestBody: unknown,
    apiKeyId: string,
  ): Promise<BackfillCreated> {
    const requestSha256 = canonicalSha256({ scheduleId, body: requestBody });
    const outcome = await this.backfills.transaction(async (tx) => {
      const earlier = await this.backfills.findByKey(tx, tenantId, idempotencyKey);
      if (earlier) return this.replayed(earlier, requestSha256);
      const schedule = await this.lockSchedule(tx, tenantId, scheduleId);
      const planned = await this.plan(tx, schedule, request);
      const toRun = planned.filter((p) => p.action === 'run' || p.action === 'rerun');
      const ordered = request.order === 'newest' ? [...toRun].reverse() : toRun;
      const inserted = await this.backfills.insert(tx, {
        ...request,
        tenantId,
        scheduleId,
        idempotencyKey,
        requestSha256,
        plan: countActions(planned),
        instants: ordered,
        apiKeyId,
      });
      // Taken meanwhile by a request with the same key: its answer is ours.
      if (!inserted)
        return this.replayed(
          (await this.backfills.findByKey(tx, tenantId, idempotencyKey))!,
          requestSha256,
        );
      return { stored: inserted, created: true };
    });
    if (outcome.created) {
      this.logger.log(
        { tenantId, scheduleId, backfillId: outcome.stored.id, instants: outcome.stored.plan },
        'backfill created',
      );
      if (outcome.stored.status === 'running') void this.advanceSafely(outcome.stored.id);
    }
    return { backfill: await this.withRuns(outcome.stored), created: outcome.created };
  }

  async get(tenantId: string, id: string): Promise<Backfill> {
    const stored = await this.backfills.find(tenantId, id);
    if (!stored) throw new NotFoundError('backfill', id);
    return this.withRuns(stored);
  }

  /**
   * Stops it: no further run is created, and its runs that have not finished are cancelled (a
   * running attempt is asked to stop). A finished backfill cannot be cancelled (409).
   */
  async cancel(tenantId: string, id: string): Promise<Backfill> {
    await this.backfills.transaction(async (tx) => {
      const stored = await this.backfills.find(tenantId, id, tx);
      if (!stored) throw new NotFoundError('backfill', id);
      if (!(await this.backfills.cancel(tx, id))) {
        throw new ConflictError(
          `backfill ${id} is ${stored.status}; it can no longer be cancelled`,
          {
            currentStatus: stored.status,
          },
        );
      }
      for (const runId of await this.occurrences.activeIdsOfOrigin(
        tx,
        tenantId,
        stored.scheduleId,
        id,
      )) {
        await this.occurrences.cancelIn(tx, tenantId, runId);
      }
    });
    this.logger.log({ tenantId, backfillId: id }, 'backfill cancelled');
    return this.get(tenantId, id);
  }

  /** The relay's round: one step of each running backfill (at most `limit` of them). */
  /** Forgets backfills that ended more than `olderThanDays` ago, at most `limit`. */
  pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    return this.backfills.pruneFinished(olderThanDays, limit);
  }

  async advanceAll(limit = 50): Promise<number> {
    let created = 0;
    for (const id of await this.backfills.running(limit)) created += await this.advance(id);
    return created;
  }

  /**
   * One step: creates the runs whose turn has come, as many as the overlap policy and
   * maxConcurrent leave room for, each re-checked against the runs standing for its instant now.
   * Under the backfill's lock (one step at a time) and the schedule's FOR SHARE (the poller and
   * edits wait). Returns how many runs it created.
   */
  async advance(id: string): Promise<number> {
    return this.backfills.transaction(async (tx) => {
      const backfill = await this.backfills.lockRunning(tx, id);
      if (!backfill) return 0;
      const schedules = await this.schedules.lockForRuns(tx, backfill.tenantId, [
        backfill.scheduleId,
      ]);
      const schedule = schedules.get(backfill.scheduleId);
      if (!schedule || schedule.status === 'cancelled') {
        await this.backfills.cancel(tx, id);
        return 0;
      }
      const active = await this.occurrences.activeByOrigin(tx, backfill.tenantId, schedule.id, id);
      const concurrent = backfill.overlapPolicy === 'allow';
      if (
        !concurrent &&
        active.others > 0 &&
        backfill.overlapPolicy === 'skip' &&
        active.ours === 0
      ) {
        // skip: the instant whose turn came while another run of the schedule is active is skipped.
        const [next] = await this.backfills.nextInstants(tx, id, 1);
        if (next)
          await this.backfills.record(tx, id, [
            { position: next.position, outcome: 'skipped_overlap', runId: null },
          ]);
        return 0;
      }
      const room = concurrent
        ? backfill.maxConcurrent - active.ours
        : active.ours + active.others > 0
          ? 0
          : 1;
      if (room <= 0) return 0;
      const next = await this.backfills.nextInstants(tx, id, room);
      return this.createRuns(tx, backfill, schedule, next);
    });
  }

  private async createRuns(
    tx: Tx,
    backfill: StoredBackfill,
    schedule: Schedule,
    instants: readonly PendingInstant[],
  ): Promise<number> {
    if (instants.length === 0) return 0;
    const standing = await this.occurrences.runsAt(
      tx,
      backfill.tenantId,
      schedule.id,
      instants.map((i) => i.at),
    );
    const outcomes: Array<{ position: number; outcome: InstantOutcome; runId: string | null }> = [];
    const runs: Array<{ position: number; run: NewOccurrence }> = [];
    for (const instant of instants) {
      // The plan said run or rerun; what stands for the instant now may have changed.
      const action = actionFor(
        instant.at,
        Infinity,
        standing.get(instant.at.getTime()),
        backfill.reprocess,
      );
      if (action === 'skip_existing' || action === 'skip_active') {
        outcomes.push({ position: instant.position, outcome: action, runId: null });
      } else
        runs.push({ position: instant.position, run: backfillRun(backfill, schedule, instant) });
    }
    const planned = runs.map((r) => r.run);
    // Through admission like any run: it waits if its tenant cannot afford it now.
    await this.admission.decideNew(tx, planned);
    const inserted = await this.occurrences.insert(tx, planned);
    const byInstant = new Map(inserted.map((row) => [row.scheduledAt.getTime(), row]));
    await this.admission.admitted(
      tx,
      runs
        .filter((r) => r.run.admitted && byInstant.has(r.run.scheduledAt.getTime()))
        .map((r) => ({
          runId: byInstant.get(r.run.scheduledAt.getTime())!.id,
          tenantId: backfill.tenantId,
          scheduledAt: r.run.scheduledAt,
        })),
    );
    for (const { position, run } of runs) {
      const row = byInstant.get(run.scheduledAt.getTime());
      // No row: this backfill already has a run of the instant under this revision.
      outcomes.push({
        position,
        outcome: row ? 'created' : 'skip_existing',
        runId: row?.id ?? null,
      });
    }
    await this.backfills.record(tx, backfill.id, outcomes);
    return inserted.length;
  }

  private async advanceSafely(id: string): Promise<void> {
    try {
      await this.advance(id);
    } catch (error) {
      // The relay's next round takes it up.
      this.logger.warn({ backfillId: id, err: errorSummary(error) }, 'backfill step failed');
    }
  }

  private async plan(
    tx: Tx,
    schedule: Schedule,
    request: BackfillRequest,
  ): Promise<PlannedInstant[]> {
    validate(schedule, request, this.clock.now());
    const instants = backfillInstants(schedule, request.from, request.to);
    if (instants === null) {
      throw new ValidationError('the backfill is invalid', [
        {
          field: 'to',
          message: `the range holds more than ${BACKFILL_LIMITS.maxInstants} instants`,
        },
      ]);
    }
    const existing = await this.occurrences.runsAt(
      tx,
      schedule.tenantId,
      schedule.id,
      instants.map((i) => i.at),
    );
    return planInstants(instants, dispatchFrontier(schedule), existing, request.reprocess);
  }

  private async lockSchedule(tx: Tx, tenantId: string, scheduleId: string): Promise<Schedule> {
    const schedule = (await this.schedules.lockForRuns(tx, tenantId, [scheduleId])).get(scheduleId);
    if (!schedule) throw new NotFoundError('schedule', scheduleId);
    if (schedule.status === 'cancelled') {
      throw new ConflictError(`schedule ${scheduleId} is cancelled; it can no longer run`, {
        currentStatus: schedule.status,
      });
    }
    return schedule;
  }

  private replayed(earlier: StoredBackfill, requestSha256: Buffer) {
    if (!earlier.requestSha256.equals(requestSha256)) throw new IdempotencyKeyReusedError();
    return { stored: earlier, created: false };
  }

  private async withRuns(stored: StoredBackfill): Promise<Backfill> {
    const { requestSha256: _hash, ...backfill } = stored;
    const runs = await this.occurrences.statesOfOrigin(
      stored.tenantId,
      stored.scheduleId,
      stored.id,
    );
    return { ...backfill, runs };
  }
}

function validate(schedule: Schedule, request: BackfillRequest, now: Date): void {
  const errors = [];
  if (schedule.timing.kind === 'once') {
    errors.push({
      field: 'scheduleId',
      message: 'a one-time schedule has no instants to backfill',
    });
  }
  if (request.from >= request.to) errors.push({ field: 'to', message: 'to must be after from' });
  if (request.to > now) {
    errors.push({
      field: 'to',
      message: 'a backfill covers past instants: to may not be in the future',
    });
  }
  if (request.overlapPolicy === 'allow' && schedule.overlapPolicy !== 'allow') {
    errors.push({
      field: 'overlapPolicy',
      message: `allow runs backfilled instants side by side, which the schedule's overlapPolicy (${schedule.overlapPolicy}) does not`,
    });
  }
  if (request.overlapPolicy !== 'allow' && request.maxConcurrent > 1) {
    errors.push({
      field: 'maxConcurrent',
      message: 'maxConcurrent above 1 needs overlapPolicy allow',
    });
  }
  if (errors.length > 0) throw new ValidationError('the backfill is invalid', errors);
}

function countActions(planned: readonly PlannedInstant[]): Record<InstantAction, number> {
  const counts = Object.fromEntries(INSTANT_ACTION_CODES.map((a) => [a, 0])) as Record<
    InstantAction,
    number
  >;
  for (const p of planned) counts[p.action]++;
  return counts;
}

/**
 * A backfilled run: the instant's own scheduledAt and local time, the schedule's current
 * revision, its identity's origin the backfill's id, and no start deadline (it is late on
 * purpose).
 */
function backfillRun(
  backfill: StoredBackfill,
  schedule: Schedule,
  instant: PendingInstant,
): NewOccurrence {
  return {
    tenantId: backfill.tenantId,
    scheduleId: schedule.id,
    revision: schedule.revision,
    scheduledAt: instant.at,
    scheduledLocal: instant.local,
    state: 'QUEUED',
    reason: null,
    trigger: 'backfill',
    maxAttempts: schedule.retryPolicy.maxAttempts,
    retryDeadlineSeconds: schedule.retryPolicy.retryDeadlineSeconds,
    priority: schedule.priority,
    startDeadlineSeconds: null,
    originKey: backfill.id,
  };
}
