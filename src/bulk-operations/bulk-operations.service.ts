import { Injectable, Logger } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { errorSummary, NotFoundError, pageSize } from '../common';
import type { Tx } from '../database';
import { OccurrencesService, type NewOccurrence } from '../occurrences';
import { SchedulesService } from '../schedules';
import {
  DONE_OUTCOMES,
  MAX_BULK_RUNS,
  type BulkItemPage,
  type BulkOperation,
  type BulkRequest,
} from './bulk-operation';
import { BulkOperationsRepository, type ItemResult } from './bulk-operations.repository';
import { planReplay } from './run-replay';

/** Runs per transaction: each batch's effects and its outcomes commit together. */
const BATCH = 100;
/** A processing replica renews its lease every batch; a dead one's expires after this. */
const LEASE_SECONDS = 30;

/**
 * Bulk replay and cancel over a fixed selection of the tenant's runs, with progress. Each batch
 * does its runs' effects and records their outcomes in one transaction, so a crash loses no
 * item and repeats none; the replica that created the operation processes it, and the relay
 * picks up one whose processor died (its lease expired).
 */
@Injectable()
export class BulkOperationsService {
  private readonly logger = new Logger(BulkOperationsService.name);

  constructor(
    private readonly operations: BulkOperationsRepository,
    private readonly occurrences: OccurrencesService,
    private readonly schedules: SchedulesService,
    private readonly admission: AdmissionService,
  ) {}

  /** Takes the selection (at most MAX_BULK_RUNS, oldest first) and starts processing it. */
  async create(tenantId: string, request: BulkRequest): Promise<BulkOperation> {
    const limit = Math.min(Math.max(1, request.limit), MAX_BULK_RUNS);
    const operation = await this.operations.transaction(async (tx) => {
      const runs = await this.occurrences.select(tx, tenantId, request.filter, limit);
      return this.operations.insert(
        tx,
        tenantId,
        request.kind,
        request.apiKeyId,
        runs.map((run) => run.id),
      );
    });
    this.logger.log(
      { tenantId, operationId: operation.id, kind: operation.kind, total: operation.total },
      'bulk operation created',
    );
    if (operation.status === 'running') void this.processNow(operation.id);
    return operation;
  }

  async get(tenantId: string, id: string): Promise<BulkOperation> {
    const operation = await this.operations.find(tenantId, id);
    if (!operation) throw new NotFoundError('bulk operation', id);
    return operation;
  }

  async items(
    tenantId: string,
    id: string,
    page: { limit?: number; afterId?: string },
  ): Promise<BulkItemPage> {
    await this.get(tenantId, id);
    const limit = pageSize(page.limit);
    const rows = await this.operations.items(tenantId, id, limit + 1, page.afterId ?? null);
    const items = rows.slice(0, limit);
    return { items, nextAfterId: rows.length > limit ? items[items.length - 1].runId : null };
  }

  /**
   * Processes the operation the caller just created (its lease is the creator's). Failures
   * are logged: the lease then expires and the relay resumes it.
   */
  async processNow(id: string): Promise<void> {
    try {
      const operation = await this.operations.lease(id, LEASE_SECONDS, true);
      if (operation) await this.drain(operation);
    } catch (error) {
      this.logger.error({ operationId: id, err: errorSummary(error) }, 'bulk operation stalled');
    }
  }

  /** The relay's part: resumes one operation whose processor is gone; true if it found one. */
  /** Forgets completed operations (and their items) finished more than `olderThanDays` ago. */
  pruneFinished(olderThanDays: number, limit: number): Promise<number> {
    return this.operations.pruneFinished(olderThanDays, limit);
  }

  async resumeStalled(): Promise<boolean> {
    const operation = await this.operations.lease(null, LEASE_SECONDS, false);
    if (!operation) return false;
    this.logger.log({ operationId: operation.id }, 'bulk operation resumed');
    await this.drain(operation);
    return true;
  }

  private async drain(operation: BulkOperation): Promise<void> {
    for (let status = operation.status; status === 'running';) {
      const next = await this.operations.transaction(async (tx) => {
        const runIds = await this.operations.lockPending(tx, operation.id, BATCH);
        if (runIds.length === 0) return null;
        const results =
          operation.kind === 'replay'
            ? await this.replay(tx, operation.tenantId, runIds)
            : await this.cancel(tx, operation.tenantId, runIds);
        const done = results.filter((r) => DONE_OUTCOMES.includes(r.outcome)).length;
        return this.operations.record(tx, operation.id, results, done, LEASE_SECONDS);
      });
      if (next === null) return;
      status = next;
    }
  }

  /** Replays of a batch: planned, admitted before their insert like any run, then published. */
  private async replay(tx: Tx, tenantId: string, runIds: readonly string[]): Promise<ItemResult[]> {
    const originals = await this.occurrences.select(
      tx,
      tenantId,
      { ids: [...runIds] },
      runIds.length,
    );
    const schedules = await this.schedules.lockForRuns(
      tx,
      tenantId,
      originals.map((run) => run.scheduleId),
    );
    const results = new Map<string, ItemResult>();
    const planned: Array<{ originalId: string; run: NewOccurrence }> = [];
    for (const original of originals) {
      const plan = planReplay(original, schedules.get(original.scheduleId));
      if (typeof plan === 'string') {
        results.set(original.id, { runId: original.id, outcome: plan, resultRunId: null });
      } else planned.push({ originalId: original.id, run: plan });
    }
    const runs = planned.map((p) => p.run);
    // Through admission like any run: a replay waits if its tenant cannot afford it now.
    await this.admission.decideNew(tx, runs);
    const inserted = await this.occurrences.insert(tx, runs);
    const byOrigin = new Map(inserted.map((row) => [row.originKey, row]));
    await this.admission.admitted(
      tx,
      planned
        .filter((p) => p.run.admitted && byOrigin.has(p.originalId))
        .map((p) => {
          const row = byOrigin.get(p.originalId)!;
          return { runId: row.id, tenantId, scheduledAt: row.scheduledAt };
        }),
    );
    for (const { originalId } of planned) {
      const row = byOrigin.get(originalId);
      results.set(originalId, {
        runId: originalId,
        outcome: row ? 'replayed' : 'already_replayed',
        resultRunId: row?.id ?? null,
      });
    }
    // A selected run that is gone (its tenant's history pruned) is not replayable.
    return runIds.map(
      (id) => results.get(id) ?? { runId: id, outcome: 'not_replayable', resultRunId: null },
    );
  }

  private async cancel(tx: Tx, tenantId: string, runIds: readonly string[]): Promise<ItemResult[]> {
    const results: ItemResult[] = [];
    for (const runId of runIds) {
      const state = await this.occurrences.cancelIn(tx, tenantId, runId);
      results.push({
        runId,
        outcome:
          state === 'CANCELLED'
            ? 'cancelled'
            : state === 'RUNNING'
              ? 'cancel_requested'
              : 'already_final',
        resultRunId: null,
      });
    }
    return results;
  }
}
