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
import type { RunPriority } from '../run-vocabulary';
import { TargetsService } from '../targets';
import type {
  AttemptReport,
  Completion,
  CompletionResult,
  HeartbeatResult,
  RunFence,
} from './execution';
import {
  ExecutionRepository,
  type EndedRunRecord,
  type HeldRunRecord,
} from './execution.repository';
import { retryDelayMs } from './retry-backoff';
import {
  Transition,
  transitionAfterAttempt,
  transitionAfterLeaseExpiry,
  transitionOfReport,
} from './run-transition';

/** A transition decided from the run as read under its fence, with what the attempt's end records. */
interface Change {
  run: HeldRunRecord;
  transition: Transition;
  attempt: AttemptRecord;
}

type AttemptRecord = Pick<
  AttemptReport,
  'httpStatus' | 'durationMs' | 'error' | 'response' | 'traceId'
>;

/** A run whose transition is written, with what follows from it in the same transaction. */
interface Settled {
  run: EndedRunRecord;
  transition: Transition;
  /** A run gone to RETRY_WAIT: when its next attempt is due and its priority (its job's). */
  retry: { at: Date; priority: RunPriority } | null;
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
   * complete() for many attempts in one transaction, behind their schedules' locks (in order). A
   * report that decides its run's end by itself (transitionOfReport: most are successes) is
   * written at once under its fence, with its attempt's end, without reading the run first; the
   * others are read and locked under their fences, decided, then written. Results are in the
   * order of `completions`; a run may appear once. The statements search the partitions of the
   * completions' scheduledAt range (all of them if one has none).
   */
  async completeMany(completions: readonly Completion[]): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    if (new Set(completions.map((c) => c.runId)).size !== completions.length) {
      throw new Error('completeMany: a run may be completed once per batch');
    }
    const outcome = await this.execution.transaction(async (tx) => {
      const finishing: Array<{ fence: Completion; transition: Transition }> = [];
      const deciding: Completion[] = [];
      for (const completion of completions) {
        const transition = transitionOfReport(completion.report);
        if (transition) finishing.push({ fence: completion, transition });
        else deciding.push(completion);
      }
      // The attempts' ends are written after the transitions that lock their runs; an attempt
      // whose run left the fence was ended by whoever moved it, and END_ATTEMPTS leaves it.
      const [{ finished, held }] = await Promise.all([
        this.execution.settleBehindScheduleLocks(tx, finishing, deciding),
        this.attempts.end(
          tx,
          finishing.map(({ fence, transition }) => attemptEnd(fence, transition, fence.report)),
        ),
      ]);
      const finishedById = new Map(finished.map((run) => [run.runId, run]));
      const heldById = new Map(held.map((run) => [run.runId, run]));
      const settled: Settled[] = [];
      const changes: Change[] = [];
      const stale: Array<{ completion: Completion; current: Run | null }> = [];
      for (const { fence, transition } of finishing) {
        const run = finishedById.get(fence.runId);
        if (run) settled.push({ run, transition, retry: null });
      }
      for (const completion of completions) {
        const run = heldById.get(completion.runId);
        if (run) {
          const { report } = completion;
          const transition = transitionAfterAttempt(run, report, () =>
            retryDelayMs(run.attempt, run.retryPolicy, this.random, report.retryAfterMs),
          );
          changes.push({ run, transition, attempt: report });
        } else if (!finishedById.has(completion.runId)) {
          stale.push({ completion, current: await this.noteStale(tx, completion) });
        }
      }
      settled.push(...(await this.write(tx, changes)));
      await this.followUp(tx, settled);
      const signals = await this.applyTargetSignals(tx, settled, completions);
      return { settled, stale, signals };
    });
    for (const signal of outcome.signals) this.lifecycle.emit(signal);
    const results = new Map<string, CompletionResult>();
    for (const { run, transition, retry } of outcome.settled) {
      this.ended(run, transition);
      results.set(run.runId, {
        accepted: true,
        state: transition.state,
        reason: transition.reason,
        reasonDetail: transition.detail,
        nextAttemptAt: retry?.at ?? null,
        retryInMs: transition.retryDelayMs,
      });
    }
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
        const settled = await this.write(tx, changes);
        await this.followUp(tx, settled);
        return settled;
      });
      for (const { run, transition } of done) this.ended(run, transition);
      swept += done.length;
    }
    return swept;
  }

  /**
   * The fenced transitions of runs read and locked under their fences, and their attempts'
   * ends, in the caller's transaction, a statement each for the whole batch, in the order of
   * `changes`.
   */
  private async write(tx: Tx, changes: readonly Change[]): Promise<Settled[]> {
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
        changes.map(({ run, transition, attempt }) => attemptEnd(run, transition, attempt)),
      ),
    ]);
    return changes.map(({ run, transition }): Settled => {
      const row = written.get(run.runId);
      // Each row is locked under this fence since it was read: this cannot miss.
      if (!row) throw new Error(`run ${run.runId} left its fence while locked`);
      const retry =
        row.state === 'RETRY_WAIT' && row.nextAttemptAt
          ? { at: row.nextAttemptAt, priority: row.priority }
          : null;
      return { run, transition, retry };
    });
  }

  /**
   * What written transitions make happen, in their transaction: the jobs of the runs that will
   * be retried, the events of those that ended, the turn an ended run hands over.
   */
  private async followUp(tx: Tx, settled: readonly Settled[]): Promise<void> {
    if (settled.length === 0) return;
    const retries: Array<{ job: RunToPublish; startAfter: Date }> = [];
    const ended = new Map<string, EndedRunRecord>();
    for (const { run, retry } of settled) {
      if (retry) {
        retries.push({
          job: {
            runId: run.runId,
            tenantId: run.tenantId,
            scheduledAt: run.scheduledAt,
            priority: retry.priority,
          },
          startAfter: retry.at,
        });
      } else {
        ended.set(run.scheduleId, run);
      }
    }
    await this.jobs.publishEach(tx, retries);
    // Subscribers hear of the runs that ended, in this transaction: one statement for the batch,
    // none when no run's tenant subscribes to anything (most batches).
    await this.events.recordRunEvents(
      tx,
      settled.filter(({ run, retry }) => run.subscribed && !retry).map(({ run }) => run.runId),
    );
    for (const run of ended.values()) {
      await this.overlap.runEnded(tx, { ...run, endedWhileWaiting: false });
    }
  }

  /**
   * What an accepted attempt's answer says about its whole target, written in the completion's
   * transaction: a 429/503 with Retry-After holds every run of the target back until then
   * (admission and the claim read backoff_until), a 410 disables it (its runs end FAILED
   * target_gone). Returns the events to emit once committed.
   */
  private async applyTargetSignals(
    tx: Tx,
    settled: readonly Settled[],
    completions: readonly Completion[],
  ): Promise<Array<Extract<LifecycleEvent, { kind: 'target.backoff' | 'target.disabled' }>>> {
    const reports = new Map(completions.map((c) => [c.runId, c.report]));
    const events: Array<Extract<LifecycleEvent, { kind: 'target.backoff' | 'target.disabled' }>> =
      [];
    for (const { run } of settled) {
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

  private ended(run: EndedRunRecord, transition: Transition): void {
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

/** The end of the attempt a fence names, as its transition decided it. */
function attemptEnd(fence: RunFence, transition: Transition, attempt: AttemptRecord) {
  return {
    runId: fence.runId,
    scheduledAt: fence.scheduledAt,
    fencingToken: fence.fencingToken,
    outcome: transition.attemptOutcome,
    httpStatus: attempt.httpStatus,
    durationMs: attempt.durationMs,
    error: transition.attemptOutcome === 'succeeded' ? null : (attempt.error ?? null),
    response: attempt.response ?? null,
    traceId: attempt.traceId ?? null,
  };
}
