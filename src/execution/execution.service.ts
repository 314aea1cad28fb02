import { Inject, Injectable } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { AttemptsService } from '../attempts';
import { APP_CONFIG, type AppConfig } from '../config';
import type { Tx } from '../database';
import { EventsService } from '../events';
import { Lifecycle, type LifecycleEvent, type RunIds } from '../observability';
import { OccurrencesService, type Run } from '../occurrences';
import { OverlapService } from '../overlap';
import { RunJobsRepository, type RunToPublish } from '../queue';
import { TargetsService } from '../targets';
import type { AttemptReport, Completion, CompletionResult, HeartbeatResult } from './execution';
import { ExecutionRepository, type HeldRunRecord } from './execution.repository';
import { retryDelayMs } from './retry-backoff';
import { Transition, transitionAfterAttempt, transitionAfterLeaseExpiry } from './run-transition';

/** One fenced transition to write, with what the attempt's end records. */
interface Change {
  run: HeldRunRecord;
  transition: Transition;
  attempt: Pick<AttemptReport, 'httpStatus' | 'durationMs' | 'error' | 'response' | 'traceId'>;
}

/**
 * A claimed run until it leaves RUNNING: heartbeats, fenced completions, and the lease expiry
 * that settles a run whose holder went away. Only the holder of the current fencing token can
 * move a run on; a stale report is noted and counted, never applied.
 */
@Injectable()
export class ExecutionService {
  /** Source of retry jitter. */
  private readonly random: () => number = Math.random;

  constructor(
    private readonly execution: ExecutionRepository,
    private readonly attempts: AttemptsService,
    private readonly runs: OccurrencesService,
    private readonly overlap: OverlapService,
    private readonly admission: AdmissionService,
    private readonly jobs: RunJobsRepository,
    private readonly targets: TargetsService,
    private readonly events: EventsService,
    private readonly lifecycle: Lifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Renews the lease for the current holder only (see HEARTBEAT). With the run's scheduledAt
   * (the built-in worker's claim carries it) only the run's history partition is searched.
   */
  heartbeat(
    tenantId: string,
    runId: string,
    fencingToken: number,
    scheduledAt?: Date,
  ): Promise<HeartbeatResult> {
    return this.execution.heartbeat(
      { runId, tenantId, fencingToken, scheduledAt },
      this.config.execution.leaseMs,
    );
  }

  /**
   * Ends the attempt under the caller's fence and moves the run on. A stale fence changes
   * nothing but a note on the caller's attempt, and is counted. `scheduledAt` as for heartbeat().
   */
  async complete(
    tenantId: string,
    runId: string,
    fencingToken: number,
    report: AttemptReport,
    scheduledAt?: Date,
  ): Promise<CompletionResult> {
    const [result] = await this.completeMany([
      { tenantId, runId, fencingToken, report, scheduledAt },
    ]);
    return result;
  }

  /**
   * complete() for many attempts in one transaction: the schedule locks (in order), the held
   * runs locked under their fences, then one UPDATE for the runs and one for the attempts.
   * Results are in the order of `completions`; a run may appear once. The locks search the
   * partitions of the completions' scheduledAt range (all of them if one has none); what follows
   * uses the instants read with the runs.
   */
  async completeMany(completions: readonly Completion[]): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    if (new Set(completions.map((c) => c.runId)).size !== completions.length) {
      throw new Error('completeMany: a run may be completed once per batch');
    }
    const outcome = await this.execution.transaction(async (tx) => {
      const held = new Map(
        (await this.execution.lockHeldBehindScheduleLocks(tx, completions)).map((run) => [
          run.runId,
          run,
        ]),
      );
      const changes: Change[] = [];
      const stale: Array<{ completion: Completion; current: Run | null }> = [];
      for (const completion of completions) {
        const run = held.get(completion.runId);
        if (!run) {
          stale.push({ completion, current: await this.noteStale(tx, completion) });
          continue;
        }
        const { report } = completion;
        const transition = transitionAfterAttempt(run, report, () =>
          retryDelayMs(run.attempt, run.retryPolicy, this.random, report.retryAfterMs),
        );
        changes.push({
          run,
          transition,
          attempt: {
            httpStatus: report.httpStatus,
            durationMs: report.durationMs,
            error: report.error,
            response: report.response,
            traceId: report.traceId,
          },
        });
      }
      const applied = await this.apply(tx, changes);
      const signals = await this.applyTargetSignals(tx, changes, completions);
      return { changes, applied, stale, signals };
    });
    for (const signal of outcome.signals) this.lifecycle.emit(signal);
    const results = new Map<string, CompletionResult>();
    outcome.changes.forEach((change, i) => {
      this.ended(change.run, change.transition);
      results.set(change.run.runId, outcome.applied[i]);
    });
    for (const { completion, current } of outcome.stale) {
      results.set(completion.runId, this.staleResult(completion, current));
    }
    return completions.map((c) => results.get(c.runId) as CompletionResult);
  }

  /**
   * Reclaims RUNNING runs whose lease expired, a bounded batch per tenant, each through the
   * fenced transition: a holder that renewed or completed meanwhile is never overridden. Under
   * the tenant's permit lock, so the turn of a buffer_one schedule is never handed over while a
   * claim of the tenant is deciding that a run must wait for it.
   */
  async sweepExpiredLeases(): Promise<number> {
    const { sweepBatchSize, sweepTenantsPerTick } = this.config.relay;
    const tenants = await this.execution.tenantsWithExpiredLeases(sweepBatchSize);
    let swept = 0;
    for (const tenantId of tenants.slice(0, sweepTenantsPerTick)) {
      const done = await this.execution.transaction(async (tx) => {
        await this.admission.holdTenantPermits(tx, tenantId);
        const expired = await this.execution.lockExpiredLeases(tx, tenantId, sweepBatchSize);
        const changes: Change[] = expired.map((run) => {
          const transition = transitionAfterLeaseExpiry(run, run.deduplicates, () =>
            retryDelayMs(run.attempt, run.retryPolicy, this.random),
          );
          return { run, transition, attempt: { error: transition.detail } };
        });
        await this.apply(tx, changes);
        return changes;
      });
      for (const { run, transition } of done) this.ended(run, transition);
      swept += done.length;
    }
    return swept;
  }

  /**
   * The fenced transitions, the attempts' ends, and the jobs they make due, in the caller's
   * transaction, a statement each for the whole batch. Results are in the order of `changes`.
   */
  private async apply(tx: Tx, changes: readonly Change[]): Promise<CompletionResult[]> {
    if (changes.length === 0) return [];
    // The transitions and the attempts' ends need nothing of each other (every run is locked
    // under its fence already): written together, they cost one wait.
    const [written] = await Promise.all([
      this.execution.transition(
        tx,
        changes.map(({ run, transition }) => ({ fence: run, transition })),
      ),
      this.attempts.end(
        tx,
        changes.map(({ run, transition, attempt }) => ({
          runId: run.runId,
          scheduledAt: run.scheduledAt,
          fencingToken: run.fencingToken,
          outcome: transition.attemptOutcome,
          httpStatus: attempt.httpStatus,
          durationMs: attempt.durationMs,
          error: transition.attemptOutcome === 'succeeded' ? null : (attempt.error ?? null),
          response: attempt.response ?? null,
          traceId: attempt.traceId ?? null,
        })),
      ),
    ]);
    const retries: Array<{ job: RunToPublish; startAfter: Date }> = [];
    const ended = new Map<string, HeldRunRecord>();
    const results = changes.map(({ run, transition }): CompletionResult => {
      const row = written.get(run.runId);
      // Each row is locked under this fence since it was read: this cannot miss.
      if (!row) throw new Error(`run ${run.runId} left its fence while locked`);
      if (row.state === 'RETRY_WAIT' && row.nextAttemptAt) {
        retries.push({
          job: {
            runId: run.runId,
            tenantId: run.tenantId,
            scheduledAt: row.scheduledAt,
            priority: row.priority,
          },
          startAfter: row.nextAttemptAt,
        });
      } else {
        ended.set(run.scheduleId, run);
      }
      return {
        accepted: true,
        state: row.state,
        reason: transition.reason,
        reasonDetail: transition.detail,
        nextAttemptAt: row.nextAttemptAt,
        retryInMs: transition.retryDelayMs,
      };
    });
    await this.jobs.publishEach(tx, retries);
    // Subscribers hear of the runs that ended, in this transaction: one statement for the batch,
    // none when no run's tenant subscribes to anything (most batches).
    await this.events.recordRunEvents(
      tx,
      changes
        .filter(({ run }) => run.subscribed && written.get(run.runId)?.state !== 'RETRY_WAIT')
        .map(({ run }) => run.runId),
    );
    for (const run of ended.values()) {
      await this.overlap.runEnded(tx, { ...run, endedWhileWaiting: false });
    }
    return results;
  }

  /**
   * What an accepted attempt's answer says about its whole target, written in the completion's
   * transaction: a 429/503 with Retry-After holds every run of the target back until then
   * (admission and the claim read backoff_until), a 410 disables it (its runs end FAILED
   * target_gone). Returns the events to emit once committed.
   */
  private async applyTargetSignals(
    tx: Tx,
    changes: readonly Change[],
    completions: readonly Completion[],
  ): Promise<Array<Extract<LifecycleEvent, { kind: 'target.backoff' | 'target.disabled' }>>> {
    const reports = new Map(completions.map((c) => [c.runId, c.report]));
    const events: Array<Extract<LifecycleEvent, { kind: 'target.backoff' | 'target.disabled' }>> =
      [];
    for (const { run } of changes) {
      const report = reports.get(run.runId);
      if (!report || !run.targetId) continue;
      const ids = { tenantId: run.tenantId, targetId: run.targetId };
      if (report.failure === 'target_gone') {
        const reason = `answered 410 Gone to run ${run.runId} (attempt ${run.attempt})`;
        if (await this.targets.disable(tx, run.tenantId, run.targetId, reason)) {
          events.push({ kind: 'target.disabled', ...ids });
        }
      } else if (report.targetBackoffMs && report.targetBackoffMs > 0) {
        if (await this.targets.backOff(tx, run.tenantId, run.targetId, report.targetBackoffMs)) {
          events.push({ kind: 'target.backoff', ...ids, seconds: report.targetBackoffMs / 1000 });
        }
      }
    }
    return events;
  }

  /** A completion whose fence no longer holds: noted on its attempt, nothing else changes. */
  private async noteStale(tx: Tx, completion: Completion): Promise<Run | null> {
    const { tenantId, runId, fencingToken, report } = completion;
    const current = await this.runs.find(tenantId, runId, tx);
    if (current) {
      const said = `${report.outcome}${report.error ? `: ${report.error}` : ''}`;
      await this.attempts.noteStale(tx, tenantId, runId, fencingToken, {
        httpStatus: report.httpStatus,
        detail: `completion rejected: fencing token ${fencingToken} is no longer current (the run is ${current.state} under token ${current.fencingToken}); the worker reported ${said}`,
      });
    }
    return current;
  }

  private staleResult(completion: Completion, current: Run | null): CompletionResult {
    if (!current) return { accepted: false, state: null };
    this.lifecycle.emit({
      kind: 'completion.stale',
      run: {
        tenantId: completion.tenantId,
        scheduleId: current.scheduleId,
        runId: completion.runId,
        attempt: current.attemptCount,
        fencingToken: completion.fencingToken,
      },
      currentFencingToken: current.fencingToken,
    });
    return { accepted: false, state: current.state };
  }

  private ended(run: HeldRunRecord, transition: Transition): void {
    const ids: RunIds = {
      tenantId: run.tenantId,
      scheduleId: run.scheduleId,
      runId: run.runId,
      attempt: run.attempt,
      fencingToken: run.fencingToken,
    };
    this.lifecycle.emit({
      kind: 'attempt.ended',
      run: ids,
      outcome: transition.attemptOutcome,
      state: transition.state,
    });
  }
}
