import { Injectable, Logger } from '@nestjs/common';
import { AttemptsService } from '../attempts/attempts.service';
import { ConflictError, NotFoundError } from '../common/problem/domain-errors';
import { toLocalIso } from '../schedules/recurrence';
import type { RunState } from './occurrence';
import { OccurrenceLedger } from './occurrence-ledger';
import { OccurrencesRepository } from './occurrences.repository';
import type { CancelResult, Run, RunPage, RunWithAttempts } from './run';

export const RUN_PAGE_LIMITS = { defaultSize: 50, maxSize: 100 } as const;

/** Run history, manual triggers and cancellation. Execution lives in RunExecutionService. */
@Injectable()
export class OccurrencesService {
  private readonly logger = new Logger(OccurrencesService.name);

  constructor(
    private readonly runs: OccurrencesRepository,
    private readonly attempts: AttemptsService,
    private readonly ledger: OccurrenceLedger,
  ) {}

  async get(tenantId: string, runId: string): Promise<RunWithAttempts> {
    const run = await this.runs.findById(tenantId, runId);
    if (!run) throw new NotFoundError('run', runId);
    return { ...run, attempts: await this.attempts.list(tenantId, runId) };
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
    const limit = Math.min(options.limit ?? RUN_PAGE_LIMITS.defaultSize, RUN_PAGE_LIMITS.maxSize);
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

  /**
   * One manual occurrence at the database's now(), recorded and published in one transaction
   * under the schedule's current revision. Two triggers within one millisecond would share an
   * identity, so the later one simply tries again at a later instant.
   */
  async trigger(tenantId: string, scheduleId: string): Promise<Run> {
    for (let round = 0; round < 3; round++) {
      const run = await this.runs.transaction(async (em) => {
        const schedule = await this.runs.lockScheduleForTrigger(em, tenantId, scheduleId);
        if (!schedule) throw new NotFoundError('schedule', scheduleId);
        if (schedule.status === 'cancelled') {
          throw new ConflictError(`schedule ${scheduleId} is cancelled; it can no longer run`, {
            currentStatus: schedule.status,
          });
        }
        const [inserted] = await this.ledger.insert(em, [
          {
            tenantId,
            scheduleId,
            revision: schedule.revision,
            scheduledAt: schedule.dbNow,
            scheduledLocal: toLocalIso(schedule.dbNow, schedule.timezone ?? 'UTC'),
            state: 'QUEUED',
            reason: null,
            trigger: 'manual',
            maxAttempts: schedule.maxAttempts,
            retryDeadlineSeconds: schedule.retryDeadlineSeconds,
          },
        ]);
        if (!inserted) return null;
        await this.ledger.publish(em, [{ runId: inserted.id, tenantId }]);
        return this.runs.findById(tenantId, inserted.id, em);
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
   * A waiting run ends CANCELLED at once; a RUNNING one is marked cancel-requested and its
   * holder stops at its next heartbeat. A final run cannot be cancelled (409).
   */
  async cancel(tenantId: string, runId: string): Promise<CancelResult> {
    const stateAfter = await this.runs.transaction(async (em) => {
      const cancelled = await this.runs.cancel(em, tenantId, runId);
      // A run that ends while waiting frees a buffer_one schedule as a finished one does.
      if (cancelled?.state === 'CANCELLED' && cancelled.overlapPolicy === 'buffer_one') {
        const waiting = await this.runs.nextWaitingRun(em, cancelled.scheduleId);
        if (waiting && waiting.runId !== runId) await this.ledger.publish(em, [waiting]);
      }
      return cancelled?.state ?? null;
    });
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
