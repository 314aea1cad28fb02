import { hostname } from 'node:os';
import { performance } from 'node:perf_hooks';
import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Job } from 'pg-boss';
import { Clock } from '../common/clock/clock';
import { NotFoundError } from '../common/problem/domain-errors';
import type { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { errorSummary } from '../observability/error-summary';
import { ExecutionMetrics } from '../occurrences/execution-metrics';
import { ExecutionSettings } from '../occurrences/execution-settings';
import type { AttemptReport, Claim, CompletionResult } from '../occurrences/run';
import { RunExecutionService } from '../occurrences/run-execution.service';
import { PgBossService } from '../queue/pg-boss.service';
import { RunJob, RUNS_QUEUE } from '../queue/queue.constants';
import { AllowedHosts, parseAllowedHosts } from '../targets/http/address-policy';
import { classifyOutcome } from '../targets/http/outcome-classifier';
import { invokeTarget } from '../targets/http/target-invoker';
import type { DispatchTarget } from '../targets/target';
import { TargetsService } from '../targets/targets.service';
import { LeaseKeeper } from './lease-keeper';

export interface Execution {
  /** When set, a job for this run becomes due after this long: wake a local worker then. */
  wakeInMs: number | null;
}

/**
 * One queue job, start to end: claim the run (receipt is not ownership), keep its lease while
 * the target is called, report the outcome under the fence. A job whose run cannot be claimed
 * is acknowledged without calling anything.
 */
@Injectable()
export class RunExecutor {
  private readonly logger = new Logger(RunExecutor.name);
  readonly workerId = `worker:${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly allowed: AllowedHosts;

  constructor(
    private readonly execution: RunExecutionService,
    private readonly targets: TargetsService,
    private readonly queue: PgBossService,
    private readonly settings: ExecutionSettings,
    private readonly metrics: ExecutionMetrics,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.allowed = parseAllowedHosts(config.targetAllowedHosts);
  }

  async execute(job: Job<RunJob>): Promise<Execution> {
    const { runId, tenantId } = job.data;
    const claimSentAt = performance.now();
    const claimed = await this.execution.claim(tenantId, runId, this.workerId, { requeue: true });
    if (!claimed.claimed) {
      this.metrics.unclaimableJobs.inc({ reason: claimed.reason });
      return { wakeInMs: claimed.requeuedInMs };
    }
    const claim = claimed.claim;
    const ids = { tenantId, scheduleId: claim.scheduleId, runId, attempt: claim.attempt };
    const keeper = new LeaseKeeper({
      claimSentAt,
      heartbeat: () => this.execution.heartbeat(tenantId, runId, claim.fencingToken),
      touchJob: () => this.queue.boss.touch(RUNS_QUEUE, { id: job.id, retryCount: job.retryCount }),
      intervalMs: this.settings.heartbeatIntervalMs,
      leaseMs: this.settings.leaseMs,
      onError: (error) =>
        this.logger.warn({ ...ids, err: errorSummary(error) }, 'heartbeat failed'),
    });
    keeper.start();
    let report: AttemptReport;
    try {
      report = await this.attempt(claim, keeper);
    } finally {
      await keeper.stop();
    }
    if (keeper.lost) {
      // Another worker may hold the run now: whatever this one learnt, it writes nothing.
      this.logger.warn(ids, 'lease lost during the attempt; result discarded');
      return { wakeInMs: null };
    }
    const result = await this.completeWithRetries(claim, report, ids);
    return { wakeInMs: result?.accepted ? result.retryInMs : null };
  }

  private async attempt(claim: Claim, keeper: LeaseKeeper): Promise<AttemptReport> {
    let target: DispatchTarget;
    try {
      target = await this.targets.getForDispatch(claim.tenantId, claim.targetId);
    } catch (error) {
      if (error instanceof NotFoundError) {
        return {
          outcome: 'failed',
          error: `target ${claim.targetId} no longer exists`,
          mayHaveActed: false,
        };
      }
      // Nothing was sent: safe to try again later.
      return {
        outcome: 'retryable',
        error: `the target could not be loaded: ${errorSummary(error).message}`,
        mayHaveActed: false,
      };
    }
    const scheduledAt = claim.scheduledAt.toISOString();
    const response = await invokeTarget(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        timeoutMs: target.timeoutMs,
        body: {
          runId: claim.runId,
          scheduleId: claim.scheduleId,
          scheduledAt,
          attempt: claim.attempt,
          fencingToken: claim.fencingToken,
          payload: claim.payload,
        },
        signingSecret: target.signingSecret,
        idempotencyKey: claim.runId,
        runId: claim.runId,
        attempt: claim.attempt,
        fencingToken: claim.fencingToken,
        scheduledAt,
      },
      { allowed: this.allowed, signal: keeper.signal, now: () => this.clock.nowMs() },
    );
    this.metrics.targetLatency.observe({ result: response.kind }, response.durationMs / 1000);
    if (keeper.cancelRequested && response.kind !== 'response') {
      return {
        outcome: 'cancelled',
        error: response.error,
        mayHaveActed: response.kind === 'maybe_sent',
        durationMs: response.durationMs,
      };
    }
    const classified = classifyOutcome(response, { deduplicates: target.deduplicates });
    return {
      outcome: classified.outcome,
      error: classified.outcome === 'succeeded' ? null : classified.reason,
      mayHaveActed: response.kind === 'maybe_sent',
      httpStatus: classified.httpStatus ?? null,
      durationMs: response.durationMs,
      retryAfterMs: classified.retryAfterMs ?? null,
    };
  }

  /**
   * The database may be briefly unreachable just when the target answered: retry the fenced
   * completion a few times. If it never gets through, the lease expires and the sweeper decides
   * (retry for a deduplicating target, else UNKNOWN), so the run is never lost.
   */
  private async completeWithRetries(
    claim: Claim,
    report: AttemptReport,
    ids: Record<string, unknown>,
  ): Promise<CompletionResult | null> {
    for (let round = 0; ; round++) {
      try {
        const result = await this.execution.complete(
          claim.tenantId,
          claim.runId,
          claim.fencingToken,
          report,
        );
        if (!result.accepted) this.logger.warn(ids, 'completion rejected: the lease had moved on');
        return result;
      } catch (error) {
        if (round >= this.settings.completionRetries) {
          this.logger.error(
            { ...ids, err: errorSummary(error) },
            'completion failed; the lease sweeper will settle the run',
          );
          return null;
        }
        this.logger.warn({ ...ids, err: errorSummary(error) }, 'completion failed; retrying');
        await new Promise((done) =>
          setTimeout(done, this.settings.completionRetryBaseMs * 2 ** round),
        );
      }
    }
  }
}
