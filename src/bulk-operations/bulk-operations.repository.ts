import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { BulkItem, BulkKind, BulkOperation, BulkOutcome, BulkStatus } from './bulk-operation';
import {
  ADVANCE_OPERATION,
  INSERT_OPERATION,
  LEASE_OPERATION,
  LIST_ITEMS,
  LOCK_PENDING_ITEMS,
  PRUNE_FINISHED_OPERATIONS,
  RECORD_ITEMS,
  SELECT_OPERATION,
} from './bulk-operations.sql';

export interface ItemResult {
  runId: string;
  outcome: BulkOutcome;
  resultRunId: string | null;
}

@Injectable()
export class BulkOperationsRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /** See PRUNE_FINISHED_OPERATIONS; returns how many went. */
  pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    return this.sql.affected(PRUNE_FINISHED_OPERATIONS, [olderThanDays, limit]);
  }

  async insert(
    tx: Tx,
    tenantId: string,
    kind: BulkKind,
    apiKeyId: string,
    runIds: readonly string[],
  ): Promise<BulkOperation> {
    const [row] = await this.sql.rows(INSERT_OPERATION, [tenantId, kind, apiKeyId, runIds], tx);
    return toOperation(row);
  }

  /** The lease of `id` (or of any stalled operation when null); `force` takes a live lease. */
  async lease(id: string | null, seconds: number, force: boolean): Promise<BulkOperation | null> {
    const [row] = await this.sql.rows(LEASE_OPERATION, [seconds, id, force]);
    return row ? toOperation(row) : null;
  }

  async lockPending(tx: Tx, operationId: string, limit: number): Promise<string[]> {
    const rows = await this.sql.rows(LOCK_PENDING_ITEMS, [operationId, limit], tx);
    return rows.map((row) => row.run_id as string);
  }

  /** Records outcomes and moves progress on; returns the status after. */
  async record(
    tx: Tx,
    operationId: string,
    results: readonly ItemResult[],
    done: number,
    leaseSeconds: number,
  ): Promise<BulkStatus> {
    const rows = results.map((r) => ({
      run_id: r.runId,
      outcome: r.outcome,
      result_run_id: r.resultRunId,
    }));
    await this.sql.affected(RECORD_ITEMS, [operationId, JSON.stringify(rows)], tx);
    const [row] = await this.sql.rows(
      ADVANCE_OPERATION,
      [operationId, results.length, done, results.length - done, leaseSeconds],
      tx,
    );
    return row.status as BulkStatus;
  }

  async find(tenantId: string, id: string): Promise<BulkOperation | null> {
    const [row] = await this.sql.rows(SELECT_OPERATION, [tenantId, id]);
    return row ? toOperation(row) : null;
  }

  async items(
    tenantId: string,
    id: string,
    limit: number,
    afterRunId: string | null,
  ): Promise<BulkItem[]> {
    const rows = await this.sql.rows(LIST_ITEMS, [tenantId, id, limit, afterRunId]);
    return rows.map((row) => ({
      runId: row.run_id as string,
      outcome: row.outcome as BulkOutcome | null,
      resultRunId: row.result_run_id as string | null,
    }));
  }
}

function toOperation(row: Row): BulkOperation {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    kind: row.kind as BulkKind,
    status: row.status as BulkStatus,
    total: row.total as number,
    processed: row.processed as number,
    succeeded: row.succeeded as number,
    skipped: row.skipped as number,
    requestedByApiKeyId: row.requested_by_key_id as string | null,
    createdAt: row.created_at as Date,
    finishedAt: row.finished_at as Date | null,
  };
}
