import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { OverlapPolicy } from '../overlap';
import type {
  Backfill,
  BackfillOrder,
  BackfillRequest,
  BackfillStatus,
  InstantAction,
  InstantOutcome,
  ReprocessMode,
} from './backfill';
import {
  ADVANCE_BACKFILL,
  CANCEL_BACKFILL,
  CANCEL_INSTANTS,
  INSERT_BACKFILL,
  LOCK_RUNNING,
  NEXT_INSTANTS,
  RECORD_INSTANTS,
  RUNNING_BACKFILLS,
  SELECT_BACKFILL,
  SELECT_BY_KEY,
  PRUNE_FINISHED_BACKFILLS,
} from './backfills.sql';

export interface NewBackfill extends BackfillRequest {
  tenantId: string;
  scheduleId: string;
  idempotencyKey: string;
  requestSha256: Buffer;
  plan: Record<InstantAction, number>;
  /** The instants to run, in run order. */
  instants: ReadonlyArray<{ at: Date; local: string }>;
  apiKeyId: string;
}

export interface StoredBackfill extends Omit<Backfill, 'runs'> {
  requestSha256: Buffer;
}

export interface PendingInstant {
  position: number;
  at: Date;
  local: string;
}

@Injectable()
export class BackfillsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** See PRUNE_FINISHED_BACKFILLS; returns how many went. */
  pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    return this.sql.affected(PRUNE_FINISHED_BACKFILLS, [olderThanDays, limit]);
  }

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /** The new backfill, or null when its key was taken (read it with findByKey). */
  async insert(tx: Tx, b: NewBackfill): Promise<StoredBackfill | null> {
    const [row] = await this.sql.rows(
      INSERT_BACKFILL,
      [
        b.tenantId,
        b.scheduleId,
        b.idempotencyKey,
        b.requestSha256.toString('hex'),
        b.from,
        b.to,
        b.reprocess,
        b.overlapPolicy,
        b.maxConcurrent,
        b.order,
        JSON.stringify(b.plan),
        b.instants.length,
        b.apiKeyId,
        JSON.stringify(
          b.instants.map((i, n) => ({ position: n + 1, at: i.at.toISOString(), local: i.local })),
        ),
      ],
      tx,
    );
    return row ? toBackfill(row) : null;
  }

  async findByKey(tx: Tx, tenantId: string, key: string): Promise<StoredBackfill | null> {
    const [row] = await this.sql.rows(SELECT_BY_KEY, [tenantId, key], tx);
    return row ? toBackfill(row) : null;
  }

  async find(tenantId: string, id: string, tx?: Tx): Promise<StoredBackfill | null> {
    const [row] = await this.sql.rows(SELECT_BACKFILL, [tenantId, id], tx);
    return row ? toBackfill(row) : null;
  }

  async lockRunning(tx: Tx, id: string): Promise<StoredBackfill | null> {
    const [row] = await this.sql.rows(LOCK_RUNNING, [id], tx);
    return row ? toBackfill(row) : null;
  }

  async running(limit: number): Promise<string[]> {
    const rows = await this.sql.rows(RUNNING_BACKFILLS, [limit]);
    return rows.map((row) => row.id as string);
  }

  async nextInstants(tx: Tx, id: string, limit: number): Promise<PendingInstant[]> {
    const rows = await this.sql.rows(NEXT_INSTANTS, [id, limit], tx);
    return rows.map((row) => ({
      position: row.position as number,
      at: row.scheduled_at as Date,
      local: row.scheduled_local as string,
    }));
  }

  async record(
    tx: Tx,
    id: string,
    outcomes: ReadonlyArray<{ position: number; outcome: InstantOutcome; runId: string | null }>,
  ): Promise<void> {
    if (outcomes.length === 0) return;
    const rows = outcomes.map((o) => ({
      position: o.position,
      outcome: o.outcome,
      run_id: o.runId,
    }));
    await this.sql.affected(RECORD_INSTANTS, [id, JSON.stringify(rows)], tx);
    const created = outcomes.filter((o) => o.outcome === 'created').length;
    await this.sql.affected(ADVANCE_BACKFILL, [id, outcomes.length, created], tx);
  }

  /** True when it was running (and now is cancelled). */
  async cancel(tx: Tx, id: string): Promise<boolean> {
    await this.sql.affected(CANCEL_INSTANTS, [id], tx);
    return (await this.sql.rows(CANCEL_BACKFILL, [id], tx)).length > 0;
  }
}

function toBackfill(row: Row): StoredBackfill {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    from: row.from_at as Date,
    to: row.to_at as Date,
    reprocess: row.reprocess as ReprocessMode,
    overlapPolicy: row.overlap_policy as OverlapPolicy,
    maxConcurrent: row.max_concurrent as number,
    order: row.run_order as BackfillOrder,
    status: row.status as BackfillStatus,
    plan: row.plan as Record<InstantAction, number>,
    processed: row.processed as number,
    created: row.created as number,
    skipped: row.skipped as number,
    requestedByApiKeyId: row.requested_by_key_id as string | null,
    createdAt: row.created_at as Date,
    finishedAt: row.finished_at as Date | null,
    requestSha256: Buffer.from(row.request_sha256 as Buffer),
  };
}
