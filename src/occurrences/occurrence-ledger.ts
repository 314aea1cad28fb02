import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { PgBossService } from '../queue/pg-boss.service';
import { RunJob, RUNS_QUEUE } from '../queue/queue.constants';
import { NewOccurrence } from './occurrence';
import {
  ACTIVE_RUNS_BY_SCHEDULE,
  FIND_ORPHANED_QUEUED_RUNS,
  INSERT_OCCURRENCES,
  OLDEST_QUEUED_AGE,
} from './occurrence-ledger.sql';
import { queryRows } from '../database/sql';

export interface InsertedOccurrence {
  id: string;
  tenantId: string;
  scheduleId: string;
  state: string;
  scheduledAt: Date;
}

/**
 * Creates occurrences and, in the same transaction, the queue jobs for those that are ready to
 * run: pg-boss on our Postgres is the outbox, so a committed QUEUED run always has its job.
 */
@Injectable()
export class OccurrenceLedger {
  constructor(private readonly queue: PgBossService) {}

  /** Inserts what is new (conflicts are another poller's win) and returns only those rows. */
  async insert(em: EntityManager, occurrences: NewOccurrence[]): Promise<InsertedOccurrence[]> {
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
      coalesced_count: o.coalescedCount ?? 0,
      coalesced_first: o.coalescedFirst?.toISOString() ?? null,
      coalesced_last: o.coalescedLast?.toISOString() ?? null,
    }));
    const inserted: Array<Record<string, unknown>> = await em.query(INSERT_OCCURRENCES, [
      JSON.stringify(rows),
    ]);
    return inserted.map((r) => ({
      id: r.id as string,
      tenantId: r.tenant_id as string,
      scheduleId: r.schedule_id as string,
      state: r.state as string,
      scheduledAt: new Date(r.scheduled_at as string),
    }));
  }

  /** Active and waiting runs per schedule, for the overlap policy (inside the dispatch txn). */
  async activeRuns(
    em: EntityManager,
    scheduleIds: readonly string[],
  ): Promise<Map<string, { active: boolean; waiting: number }>> {
    if (scheduleIds.length === 0) return new Map();
    const rows: Array<{ schedule_id: string; active: boolean; waiting: number }> = await em.query(
      ACTIVE_RUNS_BY_SCHEDULE,
      [scheduleIds],
    );
    return new Map(rows.map((r) => [r.schedule_id, { active: r.active, waiting: r.waiting }]));
  }

  /** Publishes run jobs inside the caller's transaction (commit both or neither). */
  async publish(em: EntityManager, runs: RunJob[], startAfter?: Date): Promise<void> {
    if (runs.length === 0) return;
    await this.queue.boss.insert(
      RUNS_QUEUE,
      runs.map((run) => ({ data: run, ...(startAfter ? { startAfter } : {}) })),
      { db: this.queue.transactionalDb(em) },
    );
  }

  /** Publishes run jobs that each become due at their own time, in the caller's transaction. */
  async publishEach(
    em: EntityManager,
    jobs: ReadonlyArray<{ job: RunJob; startAfter: Date }>,
  ): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.boss.insert(
      RUNS_QUEUE,
      jobs.map(({ job, startAfter }) => ({ data: job, startAfter })),
      { db: this.queue.transactionalDb(em) },
    );
  }

  /** Republishes QUEUED runs whose job is gone; returns how many (inside the caller's txn). */
  async repairOrphans(
    em: EntityManager,
    minAgeSeconds: number,
    limit: number,
    staleActiveSeconds: number,
  ): Promise<number> {
    const rows = await queryRows<{ id: string; tenant_id: string }>(em, FIND_ORPHANED_QUEUED_RUNS, [
      minAgeSeconds,
      limit,
      staleActiveSeconds,
    ]);
    await this.publish(
      em,
      rows.map((r) => ({ runId: r.id, tenantId: r.tenant_id })),
    );
    return rows.length;
  }

  async oldestQueuedAgeSeconds(em: EntityManager): Promise<number> {
    const [row] = await queryRows<{ age_seconds: number }>(em, OLDEST_QUEUED_AGE);
    return row?.age_seconds ?? 0;
  }
}
