import { Injectable, Logger } from '@nestjs/common';
import { AttemptsService } from '../attempts';
import { ConflictError, NotFoundError, pageSize } from '../common';
import type { Tx } from '../database';
import { EventsService } from '../events';
import { OverlapService } from '../overlap';
import type { RunState } from '../run-vocabulary';
import type { InsertedOccurrence, NewOccurrence, RunFilter } from './occurrence';
import { OccurrencesRepository } from './occurrences.repository';
import type { CancelResult, Run, RunPage, RunWithAttempts } from './run';

/**
 * The run ledger: creating occurrences (once each), their history, and cancellation. Claims and
 * fenced transitions are the admission and execution modules'.
 */
@Injectable()
export class OccurrencesService {
  private readonly logger = new Logger(OccurrencesService.name);

  constructor(
    private readonly runs: OccurrencesRepository,
    private readonly attempts: AttemptsService,
    private readonly overlap: OverlapService,
    private readonly events: EventsService,
  ) {}

  /**
   * Creates what is new in the caller's transaction (a conflict is another poller's win and
   * returns no row). The caller publishes the jobs of the runs that are ready, in the same
   * transaction: a committed QUEUED run always has its job.
   */
  async insert(tx: Tx, occurrences: readonly NewOccurrence[]): Promise<InsertedOccurrence[]> {
    const inserted = await this.runs.insert(tx, occurrences);
    // Rows that never run (SKIPPED, or FAILED at once) are events for their subscribers.
    await this.events.recordRunEvents(
      tx,
      inserted.filter((row) => row.state !== 'QUEUED').map((row) => row.id),
    );
    return inserted;
  }

  async get(tenantId: string, runId: string): Promise<RunWithAttempts> {
    const run = await this.runs.findById(tenantId, runId);
    if (!run) throw new NotFoundError('run', runId);
    return { ...run, attempts: await this.attempts.list(tenantId, runId) };
  }

  /** The traceparents of the runs that have one (their trace's root span), by run id. */
  traceParents(tenantId: string, runIds: readonly string[]): Promise<Map<string, string>> {
    return this.runs.traceParents(tenantId, runIds);
  }

  /** The run as it is now, inside the caller's transaction when one is given. */
  find(tenantId: string, runId: string, tx?: Tx): Promise<Run | null> {
    return this.runs.findById(tenantId, runId, tx);
  }

  /** A schedule's runs by (scheduledAt, id); another tenant's schedule is not found. */
  async list(
    tenantId: string,
    scheduleId: string,
    options: { state?: RunState; limit?: number; afterId?: string },
  ): Promise<RunPage> {
    if (!(await this.runs.scheduleExists(tenantId, scheduleId))) {
      throw new NotFoundError('schedule', scheduleId);
    }
    const limit = pageSize(options.limit);
    const rows = await this.runs.listForSchedule(tenantId, scheduleId, {
      state: options.state ?? null,
      limit: limit + 1,
      afterId: options.afterId ?? null,
    });
    const items = rows.slice(0, limit);
    return {
      items,
      nextAfterId: rows.length > limit ? items[items.length - 1].id : null,
    };
  }

  /** GET /runs: the tenant's runs by (scheduledAt, id), every filter given applied. */
  async search(
    tenantId: string,
    filter: RunFilter,
    options: { limit?: number; afterId?: string },
  ): Promise<RunPage> {
    const limit = pageSize(options.limit);
    const rows = await this.runs.search(tenantId, filter, limit + 1, options.afterId ?? null);
    const items = rows.slice(0, limit);
    return { items, nextAfterId: rows.length > limit ? items[items.length - 1].id : null };
  }

  /**
   * For each instant of a schedule, the run that stands for it (active first, else the latest;
   * SKIPPED rows do not count), keyed by epoch ms.
   */
  runsAt(
    tx: Tx,
    tenantId: string,
    scheduleId: string,
    instants: readonly Date[],
  ): Promise<Map<number, { id: string; state: RunState }>> {
    return this.runs.runsAt(tx, tenantId, scheduleId, instants);
  }

  /** A schedule's active runs of one origin (a backfill's) and the others. */
  activeByOrigin(tx: Tx, tenantId: string, scheduleId: string, originKey: string) {
    return this.runs.activeByOrigin(tx, tenantId, scheduleId, originKey);
  }

  activeIdsOfOrigin(tx: Tx, tenantId: string, scheduleId: string, originKey: string) {
    return this.runs.activeIdsOfOrigin(tx, tenantId, scheduleId, originKey);
  }

  statesOfOrigin(tenantId: string, scheduleId: string, originKey: string) {
    return this.runs.statesOfOrigin(tenantId, scheduleId, originKey);
  }

  /** Up to `limit` runs matching the filter, in the caller's transaction (a bulk selection). */
  select(tx: Tx, tenantId: string, filter: RunFilter, limit: number): Promise<Run[]> {
    return this.runs.search(tenantId, filter, limit, null, tx);
  }

  /**
   * cancel() inside the caller's transaction: the state right after (CANCELLED, or RUNNING with
   * the request recorded), or null when the run was already final (or not the tenant's).
   */
  async cancelIn(tx: Tx, tenantId: string, runId: string): Promise<RunState | null> {
    const cancelled = await this.runs.cancel(tx, tenantId, runId);
    if (cancelled?.state === 'CANCELLED') {
      await this.overlap.runEnded(tx, { ...cancelled, endedWhileWaiting: false }, runId);
    }
    return cancelled?.state ?? null;
  }

  /**
   * A waiting run ends CANCELLED at once; a RUNNING one is marked cancel-requested and its
   * holder stops at its next heartbeat. A final run cannot be cancelled (409).
   */
  async cancel(tenantId: string, runId: string): Promise<CancelResult> {
    // A run that ends while waiting frees its schedule's turn as a finished one does.
    const stateAfter = await this.runs.transaction((tx) => this.cancelIn(tx, tenantId, runId));
    const run = await this.runs.findById(tenantId, runId);
    if (!run) throw new NotFoundError('run', runId);
    if (stateAfter === null) {
      throw new ConflictError(`run ${runId} is ${run.state}; it can no longer be cancelled`, {
        currentState: run.state,
      });
    }
    // Still RUNNING on the second read: the holder has not finished yet.
    const inFlight = stateAfter === 'RUNNING' && run.state === 'RUNNING';
    this.logger.log({ tenantId, scheduleId: run.scheduleId, runId, inFlight }, 'run cancelled');
    return { run, inFlight };
  }

  /** For a cancelled schedule: the same as cancel() for each of its active runs. */
  async cancelForSchedule(
    tenantId: string,
    scheduleId: string,
  ): Promise<{ cancelled: number; cancelRequested: number }> {
    const counts = await this.runs.cancelScheduleRuns(tenantId, scheduleId);
    if (counts.cancelled + counts.cancelRequested > 0) {
      this.logger.log(
        { tenantId, scheduleId, ...counts },
        'runs of a cancelled schedule cancelled',
      );
    }
    return counts;
  }
}
