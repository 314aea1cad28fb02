import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/clock/clock';
import { canonicalSha256 } from '../common/canonical-json';
import {
  ConflictError,
  IdempotencyKeyReusedError,
  NotFoundError,
  QuotaExceededError,
  StaleRevisionError,
} from '../common/problem/domain-errors';
import { OccurrencesService } from '../occurrences/occurrences.service';
import type { Tenant } from '../tenants/tenant';
import { TargetsService } from '../targets/targets.service';
import { DstPolicy, nextOccurrences, Occurrence, toLocalIso } from './recurrence';
import { Schedule, ScheduleDefinition, ScheduleStatus } from './schedule';
import {
  buildDefinition,
  nextDueAfter,
  recurrenceSpec,
  ScheduleInput,
} from './schedule-definition';
import { SCHEDULE_LIMITS } from './schedule-limits';
import { ListPage, SchedulesRepository } from './schedules.repository';

export type ScheduleEdit = Partial<Omit<ScheduleInput, 'name' | 'targetId'>> & {
  name?: string;
  targetId?: string;
  status?: 'active' | 'paused' | 'cancelled';
};

export interface PreviewRequest {
  cron: string;
  timezone: string;
  dstPolicy?: Partial<DstPolicy>;
  from?: Date;
  count: number;
  startAt?: Date | null;
  endAt?: Date | null;
}

@Injectable()
export class SchedulesService {
  constructor(
    private readonly schedules: SchedulesRepository,
    private readonly targets: TargetsService,
    private readonly clock: Clock,
    private readonly occurrences: OccurrencesService,
  ) {}

  /**
   * Accepts a schedule only once it is durable: the 201 is sent after the schedule row and its
   * due-index entry commit. `created` is false when the Idempotency-Key replayed an earlier answer.
   */
  async create(
    tenant: Tenant,
    idempotencyKey: string,
    requestBody: unknown,
    input: ScheduleInput,
  ): Promise<{ schedule: Schedule; created: boolean }> {
    const now = this.clock.now();
    const definition = buildDefinition(input, now);
    const outcome = await this.schedules.create({
      id: randomUUID(),
      tenantId: tenant.id,
      idempotencyKey,
      requestSha256: canonicalSha256(requestBody),
      definition,
      nextDueAt: nextDueAfter(definition, now),
      maxActiveSchedules: tenant.quotas.maxActiveSchedules,
      // In the same transaction, so the target cannot be deleted between check and insert.
      guard: (em) => this.targets.assertUsable(tenant.id, definition.targetId, em),
    });
    switch (outcome.kind) {
      case 'created':
        return { schedule: outcome.schedule, created: true };
      case 'replayed':
        return { schedule: outcome.schedule, created: false };
      case 'key_reused':
        throw new IdempotencyKeyReusedError();
      case 'quota_exceeded':
        throw new QuotaExceededError('maxActiveSchedules', tenant.quotas.maxActiveSchedules);
    }
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
    options: { status?: ScheduleStatus; limit: number; afterId?: string },
  ): Promise<ListPage> {
    return this.schedules.list(tenantId, options);
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
  ): Promise<Schedule> {
    const now = this.clock.now();
    const targetId = edit.targetId;
    const guard = async (em: EntityManager) => {
      if (targetId !== undefined) await this.targets.assertUsable(tenantId, targetId, em);
    };
    const outcome = await this.schedules.update(
      tenantId,
      id,
      ifMatch,
      (current) => {
        assertEditable(current);
        const { status: requested, ...changes } = edit;
        const status = requested ?? current.status;
        const definitionChanged = Object.keys(changes).length > 0;
        const definition = definitionChanged
          ? buildDefinition({ ...toInput(current), ...changes }, now)
          : current;
        // Resuming an unchanged schedule picks up where the pause began: the instants missed
        // while paused come due at once, and the poller applies the missed-run policy to them.
        const resumed = current.status === 'paused' && status === 'active' && !definitionChanged;
        const from = resumed ? current.updatedAt : now;
        return {
          definition,
          status,
          nextDueAt: status === 'active' ? nextDueAfter(definition, from) : null,
        };
      },
      guard,
    );
    return this.afterEdit(this.unwrap(outcome, id, ifMatch));
  }

  /** DELETE: cancels for good; the schedule and its history stay readable. */
  async cancel(tenantId: string, id: string, ifMatch: number | null): Promise<Schedule> {
    const outcome = await this.schedules.update(tenantId, id, ifMatch, (current) => {
      assertEditable(current);
      return { definition: current, status: 'cancelled', nextDueAt: null };
    });
    return this.afterEdit(this.unwrap(outcome, id, ifMatch ?? 0));
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

  preview(request: PreviewRequest): Occurrence[] {
    const count = Math.min(request.count, SCHEDULE_LIMITS.maxPreviewCount);
    const definition = buildDefinition(
      {
        name: 'preview',
        targetId: 'preview',
        cron: request.cron,
        timezone: request.timezone,
        dstPolicy: request.dstPolicy,
        startAt: request.startAt,
        endAt: request.endAt,
      },
      this.clock.now(),
    );
    return nextOccurrences(recurrenceSpec(definition)!, request.from ?? this.clock.now(), count);
  }

  async previewSchedule(tenantId: string, id: string, count: number): Promise<Occurrence[]> {
    const schedule = await this.get(tenantId, id);
    const now = this.clock.now();
    if (schedule.status === 'cancelled' || schedule.status === 'completed') return [];
    if (schedule.timing.kind === 'once') {
      const runAt = schedule.timing.runAt;
      return runAt > now ? [{ at: runAt, local: toLocalIso(runAt, 'UTC') }] : [];
    }
    const spec = recurrenceSpec(schedule)!;
    return nextOccurrences(spec, now, Math.min(count, SCHEDULE_LIMITS.maxPreviewCount));
  }

  private unwrap(
    outcome: Awaited<ReturnType<SchedulesRepository['update']>>,
    id: string,
    expected: number,
  ): Schedule {
    switch (outcome.kind) {
      case 'updated':
        return outcome.schedule;
      case 'not_found':
        throw new NotFoundError('schedule', id);
      case 'stale':
        throw new StaleRevisionError(expected, outcome.current);
    }
  }
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

function toInput(schedule: ScheduleDefinition): ScheduleInput {
  const { timing } = schedule;
  return {
    name: schedule.name,
    targetId: schedule.targetId,
    payload: schedule.payload,
    runAt: timing.kind === 'once' ? timing.runAt : null,
    cron: timing.kind === 'cron' ? timing.cron : null,
    timezone: timing.kind === 'cron' ? timing.timezone : null,
    dstPolicy: timing.kind === 'cron' ? timing.dstPolicy : undefined,
    startAt: schedule.startAt,
    endAt: schedule.endAt,
    missedRunPolicy: schedule.missedRunPolicy,
    maxCatchUp: schedule.maxCatchUp,
    overlapPolicy: schedule.overlapPolicy,
    retryPolicy: schedule.retryPolicy,
  };
}
