import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { OverlapPolicy } from '../overlap';
import {
  priorityOfRank,
  priorityRank,
  type CancelReason,
  type RunReason,
  type RunState,
} from '../run-vocabulary';
import type { InsertedOccurrence, NewOccurrence, RunFilter } from './occurrence';
import type { Run } from './run';
import {
  CANCEL_RUN,
  CANCEL_SCHEDULE_RUNS,
  INSERT_OCCURRENCES,
  LIST_RUNS_AFTER,
  LIST_RUNS_FIRST_PAGE,
  SCHEDULE_EXISTS,
  ACTIVE_RUN_IDS_OF_ORIGIN,
  ACTIVE_RUNS_BY_ORIGIN,
  RUNS_AT_INSTANTS,
  SEARCH_RUNS,
  SELECT_RUN,
  STATES_OF_ORIGIN,
  SELECT_TRACE_PARENTS,
} from './occurrences.sql';

@Injectable()
export class OccurrencesRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /** Inserts what is new (see INSERT_OCCURRENCES) and returns only those rows. */
  async insert(tx: Tx, occurrences: readonly NewOccurrence[]): Promise<InsertedOccurrence[]> {
    if (occurrences.length === 0) return [];
    const rows = occurrences.map((o) => ({
      tenant_id: o.tenantId,
      schedule_id: o.scheduleId,
      revision: o.revision,
      scheduled_at: o.scheduledAt.toISOString(),
      scheduled_local: o.scheduledLocal,
      state: o.state,
      reason: o.reason,
      trigger: o.trigger,
      max_attempts: o.maxAttempts,
      retry_deadline_seconds: o.retryDeadlineSeconds,
      priority: priorityRank(o.priority),
      start_deadline_seconds: o.startDeadlineSeconds,
      fires_at: (o.firesAt ?? o.scheduledAt).toISOString(),
      admitted: o.admitted ?? false,
      coalesced_count: o.coalescedCount ?? 0,
      coalesced_first: o.coalescedFirst?.toISOString() ?? null,
      coalesced_last: o.coalescedLast?.toISOString() ?? null,
      origin_key: o.originKey ?? '',
      idempotency_key: o.idempotencyKey ?? null,
      replay_of: o.replayOf ?? null,
      trace_parent: o.traceParent ?? null,
    }));
    const inserted = await this.sql.rows(INSERT_OCCURRENCES, [JSON.stringify(rows)], tx);
    return inserted.map((r) => ({
      id: r.id as string,
      tenantId: r.tenant_id as string,
      scheduleId: r.schedule_id as string,
      state: r.state as InsertedOccurrence['state'],
      scheduledAt: new Date(r.scheduled_at as string),
      originKey: r.origin_key as string,
    }));
  }

  async runsAt(
    tx: Tx,
    tenantId: string,
    scheduleId: string,
    instants: readonly Date[],
  ): Promise<Map<number, { id: string; state: RunState }>> {
    if (instants.length === 0) return new Map();
    const rows = await this.sql.rows(
      RUNS_AT_INSTANTS,
      [tenantId, scheduleId, instants.map((at) => at.toISOString())],
      tx,
    );
    return new Map(
      rows.map((row) => [
        (row.scheduled_at as Date).getTime(),
        { id: row.id as string, state: row.state as RunState },
      ]),
    );
  }

  async activeByOrigin(
    tx: Tx,
    tenantId: string,
    scheduleId: string,
    originKey: string,
  ): Promise<{ ours: number; others: number }> {
    const [row] = await this.sql.rows(ACTIVE_RUNS_BY_ORIGIN, [tenantId, scheduleId, originKey], tx);
    return { ours: row.ours as number, others: row.others as number };
  }

  async activeIdsOfOrigin(
    tx: Tx,
    tenantId: string,
    scheduleId: string,
    originKey: string,
  ): Promise<string[]> {
    const rows = await this.sql.rows(
      ACTIVE_RUN_IDS_OF_ORIGIN,
      [tenantId, scheduleId, originKey],
      tx,
    );
    return rows.map((row) => row.id as string);
  }

  async statesOfOrigin(
    tenantId: string,
    scheduleId: string,
    originKey: string,
  ): Promise<Partial<Record<RunState, number>>> {
    const rows = await this.sql.rows(STATES_OF_ORIGIN, [tenantId, scheduleId, originKey]);
    return Object.fromEntries(rows.map((row) => [row.state as RunState, row.n as number]));
  }

  /** GET /runs: the tenant's runs matching every filter given, after the run `afterId`. */
  async search(
    tenantId: string,
    filter: RunFilter,
    limit: number,
    afterId: string | null,
    tx?: Tx,
  ): Promise<Run[]> {
    const rows = await this.sql.rows(
      SEARCH_RUNS,
      [
        tenantId,
        filter.state ?? null,
        filter.reason ?? null,
        filter.scheduleId ?? null,
        filter.targetId ?? null,
        filter.trigger ?? null,
        filter.scheduledFrom ?? null,
        filter.scheduledTo ?? null,
        filter.finishedFrom ?? null,
        filter.finishedTo ?? null,
        filter.ids ?? null,
        limit,
        afterId,
      ],
      tx,
    );
    return rows.map(toRun);
  }

  /**
   * The run's state right after the cancel: CANCELLED, or RUNNING with a cancel request. Null
   * when no active run matched (not found, or already final).
   */
  async traceParents(tenantId: string, runIds: readonly string[]): Promise<Map<string, string>> {
    if (runIds.length === 0) return new Map();
    const rows = await this.sql.rows<{ id: string; trace_parent: string }>(SELECT_TRACE_PARENTS, [
      tenantId,
      runIds,
    ]);
    return new Map(rows.map((r) => [r.id, r.trace_parent]));
  }

  async cancel(
    tx: Tx,
    tenantId: string,
    runId: string,
  ): Promise<{ state: RunState; scheduleId: string; overlapPolicy: OverlapPolicy } | null> {
    const reason: CancelReason = 'cancelled_by_request';
    const [row] = await this.sql.rows(CANCEL_RUN, [runId, tenantId, reason], tx);
    if (!row) return null;
    return {
      state: row.state as RunState,
      scheduleId: row.schedule_id as string,
      overlapPolicy: row.overlap_policy as OverlapPolicy,
    };
  }

  async cancelScheduleRuns(
    tenantId: string,
    scheduleId: string,
  ): Promise<{ cancelled: number; cancelRequested: number }> {
    const reason: CancelReason = 'schedule_cancelled';
    const rows = await this.sql.rows(CANCEL_SCHEDULE_RUNS, [scheduleId, tenantId, reason]);
    const cancelRequested = rows.filter((row) => row.state === 'RUNNING').length;
    return { cancelled: rows.length - cancelRequested, cancelRequested };
  }

  async findById(tenantId: string, runId: string, tx?: Tx): Promise<Run | null> {
    const [row] = await this.sql.rows(SELECT_RUN, [tenantId, runId], tx);
    return row ? toRun(row) : null;
  }

  async listForSchedule(
    tenantId: string,
    scheduleId: string,
    options: { state: RunState | null; limit: number; afterId: string | null },
  ): Promise<Run[]> {
    const rows = options.afterId
      ? await this.sql.rows(LIST_RUNS_AFTER, [
          tenantId,
          scheduleId,
          options.state,
          options.limit,
          options.afterId,
        ])
      : await this.sql.rows(LIST_RUNS_FIRST_PAGE, [
          tenantId,
          scheduleId,
          options.state,
          options.limit,
        ]);
    return rows.map(toRun);
  }

  async scheduleExists(tenantId: string, scheduleId: string): Promise<boolean> {
    return (await this.sql.rows(SCHEDULE_EXISTS, [tenantId, scheduleId])).length > 0;
  }
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
    reason: row.reason as RunReason | null,
    reasonDetail: row.reason_detail as string | null,
    trigger: row.trigger as Run['trigger'],
    idempotencyKey: row.idempotency_key as string,
    replayOf: row.replay_of as string | null,
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
    priority: priorityOfRank(row.priority as number),
    startDeadline: row.start_deadline as Date | null,
    firesAt: row.fires_at as Date,
    estimatedStartAt: (row.estimated_start_at as Date | undefined) ?? null,
    // traceparent: version-traceid-spanid-flags
    traceId: typeof row.trace_parent === 'string' ? row.trace_parent.split('-')[1] : null,
  };
}
