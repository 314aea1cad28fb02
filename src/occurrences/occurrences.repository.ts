import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { queryAffected, queryRows } from '../database/sql';
import { DataSource, EntityManager } from 'typeorm';
import type { RunJob } from '../queue/queue.constants';
import type { RunState } from './occurrence';
import type { Claim, HeartbeatResult, Run } from './run';
import type { ClaimDiagnosis, HeldRun, Transition } from './run-transition';
import {
  CANCEL_RUN,
  CANCEL_SCHEDULE_RUNS,
  CLAIM_RUNS,
  DIAGNOSE_CLAIM,
  END_WAITING_RUN,
  HEARTBEAT,
  LIST_RUNS_AFTER,
  LIST_RUNS_FIRST_PAGE,
  LOCK_EXPIRED_LEASES,
  LOCK_HELD_RUNS,
  LOCK_SCHEDULE_SHARED,
  LOCK_SCHEDULE_FOR_TRIGGER,
  LOCK_SCHEDULES_OF_RUNS,
  LOCK_TENANT_AND_SCHEDULE_OF_RUN,
  LOCK_TENANT_PERMITS,
  LOCK_TENANTS_PERMITS,
  NEXT_WAITING_RUN,
  NOTE_WAITING_REASON,
  SCHEDULE_EXISTS,
  SELECT_RUN,
  TENANTS_WITH_EXPIRED_LEASES,
  TRANSITION_UNDER_FENCE,
} from './occurrences.sql';

/** A RUNNING run read under its fence, with what its transition needs. */
export interface HeldRunRecord extends HeldRun {
  runId: string;
  tenantId: string;
  scheduleId: string;
  fencingToken: number;
  overlapPolicy: string;
  retryPolicy: { initialDelayMs: number; maxDelayMs: number };
}

/** A run as one holder's claim left it: the fence its writes must carry. */
export interface RunFence {
  runId: string;
  tenantId: string;
  fencingToken: number;
}

export interface ExpiredLeaseRecord extends HeldRunRecord {
  deduplicates: boolean;
}

export interface ClaimDiagnosisRecord extends ClaimDiagnosis {
  scheduleId: string;
  reason: string | null;
  dueAt: Date;
  overlapPolicy: string;
  dbNow: Date;
}

export interface TriggerSchedule {
  id: string;
  tenantId: string;
  revision: number;
  status: string;
  timezone: string | null;
  maxAttempts: number;
  retryDeadlineSeconds: number;
  dbNow: Date;
}

type Row = Record<string, unknown>;

@Injectable()
export class OccurrencesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  async lockTenantPermits(em: EntityManager, tenantId: string): Promise<void> {
    await em.query(LOCK_TENANT_PERMITS, [tenantId]);
  }

  /** The claim's locks: the tenant's permits, then the run's schedule (one round trip). */
  async lockForClaim(em: EntityManager, runId: string, tenantId: string): Promise<void> {
    const [row] = await this.rows(LOCK_TENANT_AND_SCHEDULE_OF_RUN, [runId, tenantId], em);
    // An unknown run locks nothing here; the claim then finds nothing to claim either.
    if (!row) await this.lockTenantPermits(em, tenantId);
  }

  /** The schedule locks of a batch of completions (see LOCK_SCHEDULES_OF_RUNS). */
  async lockSchedulesOfRuns(em: EntityManager, runIds: readonly string[]): Promise<void> {
    await em.query(LOCK_SCHEDULES_OF_RUNS, [runIds]);
  }

  /** The permit locks of several tenants, in order (see LOCK_TENANTS_PERMITS). */
  async lockTenantsPermits(em: EntityManager, tenantIds: readonly string[]): Promise<void> {
    await em.query(LOCK_TENANTS_PERMITS, [tenantIds]);
  }

  /** What can be claimed of the runs, with attempts and rate tokens (see CLAIM_RUNS). */
  async claimMany(
    em: EntityManager,
    runs: readonly RunJob[],
    workerId: string,
    leaseMs: number,
  ): Promise<Claim[]> {
    const rows = await this.rows(
      CLAIM_RUNS,
      [runs.map((r) => r.runId), runs.map((r) => r.tenantId), workerId, leaseMs],
      em,
    );
    return rows.map(toClaim);
  }

  async diagnoseClaim(
    em: EntityManager,
    runId: string,
    tenantId: string,
  ): Promise<ClaimDiagnosisRecord | null> {
    const [row] = await this.rows(DIAGNOSE_CLAIM, [runId, tenantId], em);
    if (!row) return null;
    return {
      state: row.state as RunState,
      scheduleId: row.schedule_id as string,
      reason: row.reason as string | null,
      notDue: row.not_due as boolean,
      dueAt: row.due_at as Date,
      scheduleCancelled: row.schedule_cancelled as boolean,
      cancelRequested: row.cancel_requested as boolean,
      attemptsExhausted: row.attempts_exhausted as boolean,
      deadlinePassed: row.deadline_passed as boolean,
      tenantAtCapacity: row.tenant_at_capacity as boolean,
      overlapping: row.overlapping as boolean,
      overlapPolicy: row.overlap_policy as string,
      dbNow: row.db_now as Date,
    };
  }

  /** True when the run was still waiting and is now ended. */
  async endWaiting(
    em: EntityManager,
    runId: string,
    tenantId: string,
    state: RunState,
    reason: string,
  ): Promise<boolean> {
    return (await this.affected(END_WAITING_RUN, [runId, tenantId, state, reason], em)) > 0;
  }

  async noteWaitingReason(
    em: EntityManager,
    runId: string,
    tenantId: string,
    reason: string,
  ): Promise<void> {
    await this.affected(NOTE_WAITING_REASON, [runId, tenantId, reason], em);
  }

  async heartbeat(
    runId: string,
    tenantId: string,
    fencingToken: number,
    leaseMs: number,
  ): Promise<HeartbeatResult> {
    const [row] = await this.rows(HEARTBEAT, [runId, tenantId, fencingToken, leaseMs]);
    if (!row) return { held: false };
    return {
      held: true,
      leaseUntil: row.lease_until as Date,
      cancelRequested: row.cancel_requested as boolean,
    };
  }

  /** The runs still held under the given fences, locked (see LOCK_HELD_RUNS). */
  async lockHeld(em: EntityManager, fences: readonly RunFence[]): Promise<HeldRunRecord[]> {
    const rows = await this.rows(
      LOCK_HELD_RUNS,
      [
        fences.map((f) => f.runId),
        fences.map((f) => f.tenantId),
        fences.map((f) => f.fencingToken),
      ],
      em,
    );
    return rows.map(toHeldRun);
  }

  async lockExpiredLeases(
    em: EntityManager,
    tenantId: string,
    limit: number,
  ): Promise<ExpiredLeaseRecord[]> {
    const rows = await this.rows(LOCK_EXPIRED_LEASES, [tenantId, limit], em);
    return rows.map((row) => ({ ...toHeldRun(row), deduplicates: row.deduplicates as boolean }));
  }

  /**
   * The fenced transitions, by run id; a run missing from the result left its fence (nothing
   * was written for it).
   */
  async transition(
    em: EntityManager,
    transitions: ReadonlyArray<{ runId: string; fencingToken: number; transition: Transition }>,
  ): Promise<Map<string, { state: RunState; nextAttemptAt: Date | null }>> {
    const rows = await this.rows(
      TRANSITION_UNDER_FENCE,
      [
        transitions.map((t) => t.runId),
        transitions.map((t) => t.fencingToken),
        transitions.map((t) => t.transition.state),
        transitions.map((t) => t.transition.reason),
        transitions.map((t) => t.transition.retryDelayMs),
      ],
      em,
    );
    return new Map(
      rows.map((row) => [
        row.id as string,
        { state: row.state as RunState, nextAttemptAt: row.next_attempt_at as Date | null },
      ]),
    );
  }

  /** The oldest run waiting for the schedule's previous one (see LOCK_SCHEDULE_SHARED). */
  async nextWaitingRun(em: EntityManager, scheduleId: string): Promise<RunJob | null> {
    await em.query(LOCK_SCHEDULE_SHARED, [scheduleId]);
    const [row] = await this.rows(NEXT_WAITING_RUN, [scheduleId], em);
    return row ? { runId: row.id as string, tenantId: row.tenant_id as string } : null;
  }

  async tenantsWithExpiredLeases(limit: number): Promise<string[]> {
    const rows = await this.rows(TENANTS_WITH_EXPIRED_LEASES, [limit]);
    return rows.map((row) => row.tenant_id as string);
  }

  /**
   * The run's state right after the cancel: CANCELLED, or RUNNING with a cancel request. Null
   * when no active run matched (not found, or already final).
   */
  async cancel(
    em: EntityManager,
    tenantId: string,
    runId: string,
  ): Promise<{ state: RunState; scheduleId: string; overlapPolicy: string } | null> {
    const [row] = await this.rows(CANCEL_RUN, [runId, tenantId, 'cancelled by request'], em);
    if (!row) return null;
    return {
      state: row.state as RunState,
      scheduleId: row.schedule_id as string,
      overlapPolicy: row.overlap_policy as string,
    };
  }

  async cancelScheduleRuns(
    tenantId: string,
    scheduleId: string,
  ): Promise<{ cancelled: number; cancelRequested: number }> {
    const rows = await this.rows(CANCEL_SCHEDULE_RUNS, [
      scheduleId,
      tenantId,
      'schedule cancelled',
    ]);
    const cancelRequested = rows.filter((row) => row.state === 'RUNNING').length;
    return { cancelled: rows.length - cancelRequested, cancelRequested };
  }

  async findById(tenantId: string, runId: string, em?: EntityManager): Promise<Run | null> {
    const [row] = await this.rows(SELECT_RUN, [tenantId, runId], em);
    return row ? toRun(row) : null;
  }

  async listForSchedule(
    tenantId: string,
    scheduleId: string,
    options: { state: RunState | null; limit: number; afterId: string | null },
  ): Promise<Run[]> {
    const rows = options.afterId
      ? await this.rows(LIST_RUNS_AFTER, [
          tenantId,
          scheduleId,
          options.state,
          options.limit,
          options.afterId,
        ])
      : await this.rows(LIST_RUNS_FIRST_PAGE, [tenantId, scheduleId, options.state, options.limit]);
    return rows.map(toRun);
  }

  async scheduleExists(tenantId: string, scheduleId: string): Promise<boolean> {
    return (await this.rows(SCHEDULE_EXISTS, [tenantId, scheduleId])).length > 0;
  }

  async lockScheduleForTrigger(
    em: EntityManager,
    tenantId: string,
    scheduleId: string,
  ): Promise<TriggerSchedule | null> {
    const [row] = await this.rows(LOCK_SCHEDULE_FOR_TRIGGER, [tenantId, scheduleId], em);
    if (!row) return null;
    return {
      id: row.id as string,
      tenantId: row.tenant_id as string,
      revision: row.revision as number,
      status: row.status as string,
      timezone: row.timezone as string | null,
      maxAttempts: row.retry_max_attempts as number,
      retryDeadlineSeconds: row.retry_deadline_seconds as number,
      dbNow: row.db_now as Date,
    };
  }

  private rows(sql: string, params: unknown[], em?: EntityManager): Promise<Row[]> {
    return queryRows<Row>(em ?? this.dataSource, sql, params);
  }

  private affected(sql: string, params: unknown[], em?: EntityManager): Promise<number> {
    return queryAffected(em ?? this.dataSource, sql, params);
  }
}

function toClaim(row: Row): Claim {
  return {
    runId: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    fencingToken: Number(row.fencing_token),
    attempt: row.attempt_count as number,
    leaseUntil: row.lease_until as Date,
    scheduledAt: row.scheduled_at as Date,
    targetId: row.target_id as string,
    payload: (row.payload ?? {}) as Record<string, unknown>,
  };
}

function toHeldRun(row: Row): HeldRunRecord {
  return {
    runId: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    fencingToken: Number(row.fencing_token),
    attempt: row.attempt_count as number,
    maxAttempts: row.max_attempts as number,
    retryDeadline: row.retry_deadline as Date,
    cancelRequested: row.cancel_requested as boolean,
    overlapPolicy: row.overlap_policy as string,
    retryPolicy: {
      initialDelayMs: row.retry_initial_delay_ms as number,
      maxDelayMs: row.retry_max_delay_ms as number,
    },
    dbNow: row.db_now as Date,
  };
}

function toRun(row: Row): Run {
  const coalescedCount = row.coalesced_count as number;
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    revision: row.revision as number,
    scheduledAt: row.scheduled_at as Date,
    scheduledLocal: row.scheduled_local as string,
    state: row.state as RunState,
    reason: row.reason as string | null,
    trigger: row.trigger as Run['trigger'],
    attemptCount: row.attempt_count as number,
    maxAttempts: row.max_attempts as number,
    fencingToken: Number(row.fencing_token),
    leaseUntil: row.lease_until as Date | null,
    nextAttemptAt: row.next_attempt_at as Date | null,
    cancelRequestedAt: row.cancel_requested_at as Date | null,
    coalesced:
      coalescedCount > 0
        ? {
            count: coalescedCount,
            first: row.coalesced_first as Date | null,
            last: row.coalesced_last as Date | null,
          }
        : null,
    createdAt: row.created_at as Date,
    finishedAt: row.finished_at as Date | null,
  };
}
