import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AttemptsService } from '../attempts/attempts.service';
import { retryDelayMs } from '../targets/http/outcome-classifier';
import { ExecutionMetrics } from './execution-metrics';
import { ExecutionSettings } from './execution-settings';
import { DispatchBudget } from '../tenants/dispatch-budget';
import { OccurrenceLedger } from './occurrence-ledger';
import type { RunJob } from '../queue/queue.constants';
import {
  ClaimDiagnosisRecord,
  HeldRunRecord,
  OccurrencesRepository,
  RunFence,
} from './occurrences.repository';
import type {
  AttemptReport,
  Claim,
  Run,
  ClaimRefusal,
  ClaimResult,
  CompletionResult,
  HeartbeatResult,
} from './run';
import {
  claimRefusal,
  Transition,
  transitionAfterAttempt,
  transitionAfterLeaseExpiry,
} from './run-transition';

export const THROTTLED_REASON = 'throttled: tenant maxConcurrentRuns';
export const RATE_LIMITED_REASON = 'throttled: tenant dispatchRatePerSecond';
export const WAITING_FOR_PREVIOUS = 'waiting_for_previous';

/** An attempt's report under the fence its holder claimed with. */
export interface Completion extends RunFence {
  report: AttemptReport;
}

/** One fenced transition to write, with what the attempt's end records. */
interface Change {
  run: HeldRunRecord;
  transition: Transition;
  attempt: { httpStatus?: number | null; durationMs?: number | null; error?: string | null };
}

export interface ClaimOptions {
  /**
   * The caller consumed a queue job for this run (the built-in worker): a run that must wait
   * (not due, throttled) gets a new job, so acknowledging the consumed one loses nothing. An
   * external worker's claim does not, so polling a run cannot multiply its jobs.
   */
  requeue?: boolean;
}

/**
 * Claims, heartbeats, fenced completions and lease expiry: the whole lifecycle of an attempt.
 * The built-in worker and the HTTP worker contract call exactly these methods.
 */
@Injectable()
export class RunExecutionService {
  private readonly logger = new Logger(RunExecutionService.name);
  /** Source of retry jitter; replaceable in tests. */
  random: () => number = Math.random;

  constructor(
    private readonly runs: OccurrencesRepository,
    private readonly attempts: AttemptsService,
    private readonly ledger: OccurrenceLedger,
    private readonly settings: ExecutionSettings,
    private readonly metrics: ExecutionMetrics,
    private readonly budget: DispatchBudget,
  ) {}

  /**
   * The batched claim's statement with one run decides (see CLAIM_RUNS), under the tenant's and
   * the schedule's locks; a run it does not take is diagnosed (DIAGNOSE_CLAIM) and refused with
   * the reason. The attempt row is appended in the same
   * transaction. A refused run that can never run is ended here (CANCELLED, FAILED, SKIPPED).
   */
  async claim(
    tenantId: string,
    runId: string,
    workerId: string,
    options: ClaimOptions = {},
  ): Promise<ClaimResult> {
    const result = await this.runs.transaction(async (em): Promise<ClaimResult> => {
      await this.runs.lockForClaim(em, runId, tenantId);
      let diagnosis: ClaimDiagnosisRecord | null = null;
      // Under the tenant lock permits and rate tokens only come back, so a second try settles
      // any race.
      for (let round = 0; round < 2; round++) {
        const [claim] = await this.runs.claimMany(
          em,
          [{ runId, tenantId }],
          workerId,
          this.settings.leaseMs,
        );
        if (claim) return { claimed: true, claim };
        diagnosis = await this.runs.diagnoseClaim(em, runId, tenantId);
        let reason = claimRefusal(diagnosis);
        let rateWaitMs = 0;
        if (!reason && diagnosis) {
          rateWaitMs = await this.budget.waitMs(em, tenantId);
          if (rateWaitMs > 0) reason = 'rate_limited';
        }
        if (reason) {
          return this.refuse(em, tenantId, runId, reason, diagnosis, options, rateWaitMs);
        }
      }
      return this.refuse(em, tenantId, runId, 'contended', diagnosis, options);
    });
    if (result.claimed) {
      this.logClaimed(result.claim);
    } else {
      this.metrics.claimsRefused.inc({ reason: result.reason });
      this.logger.debug({ tenantId, runId, reason: result.reason }, 'claim refused');
    }
    return result;
  }

  /**
   * The fast path of a busy worker: claims what it can of a batch of runs (of any tenants) in
   * one transaction of two statements (the tenants' permit locks, then CLAIM_RUNS: the claims,
   * their attempts and their rate tokens). Runs it did not take are not refused: the caller
   * claims each alone with claim(), which says why and requeues or ends it.
   */
  async claimBatch(runs: readonly RunJob[], workerId: string): Promise<Claim[]> {
    if (runs.length === 0) return [];
    const claims = await this.runs.transaction(async (em) => {
      await this.runs.lockTenantsPermits(
        em,
        runs.map((run) => run.tenantId),
      );
      return this.runs.claimMany(em, runs, workerId, this.settings.leaseMs);
    });
    for (const claim of claims) this.logClaimed(claim);
    return claims;
  }

  /** Renews the lease for the current holder only (see HEARTBEAT). */
  heartbeat(tenantId: string, runId: string, fencingToken: number): Promise<HeartbeatResult> {
    return this.runs.heartbeat(runId, tenantId, fencingToken, this.settings.leaseMs);
  }

  /**
   * Ends the attempt under the caller's fence and moves the run on. A stale fence changes
   * nothing but a note on the caller's attempt, and is counted.
   */
  async complete(
    tenantId: string,
    runId: string,
    fencingToken: number,
    report: AttemptReport,
  ): Promise<CompletionResult> {
    const [result] = await this.completeMany([{ tenantId, runId, fencingToken, report }]);
    return result;
  }

  /**
   * complete() for many attempts in one transaction: the schedule locks (in order), the held
   * runs locked under their fences, then one UPDATE for the runs and one for the attempts.
   * Results are in the order of `completions`; a run may appear once.
   */
  async completeMany(completions: readonly Completion[]): Promise<CompletionResult[]> {
    if (completions.length === 0) return [];
    if (new Set(completions.map((c) => c.runId)).size !== completions.length) {
      throw new Error('completeMany: a run may be completed once per batch');
    }
    const outcome = await this.runs.transaction(async (em) => {
      await this.runs.lockSchedulesOfRuns(
        em,
        completions.map((c) => c.runId),
      );
      const held = new Map(
        (await this.runs.lockHeld(em, completions)).map((run) => [run.runId, run]),
      );
      const changes: Change[] = [];
      const stale: Array<{ completion: Completion; current: Run | null }> = [];
      for (const completion of completions) {
        const run = held.get(completion.runId);
        if (!run) {
          stale.push({ completion, current: await this.noteStale(em, completion) });
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
          },
        });
      }
      const applied = await this.apply(em, changes);
      return { changes, applied, stale };
    });
    const results = new Map<string, CompletionResult>();
    outcome.changes.forEach((change, i) => {
      this.recordTransition(change.run, change.transition);
      results.set(change.run.runId, outcome.applied[i]);
    });
    for (const { completion, current } of outcome.stale) {
      results.set(completion.runId, this.staleResult(completion, current));
    }
    return completions.map((c) => results.get(c.runId) as CompletionResult);
  }

  /**
   * Reclaims RUNNING runs whose lease expired, a bounded batch per tenant, each through the
   * fenced transition: a holder that renewed or completed meanwhile is never overridden.
   */
  async sweepExpiredLeases(): Promise<number> {
    const tenants = await this.runs.tenantsWithExpiredLeases(this.settings.sweepBatchSize);
    let swept = 0;
    for (const tenantId of tenants.slice(0, this.settings.sweepTenantsPerTick)) {
      const done = await this.runs.transaction(async (em) => {
        await this.runs.lockTenantPermits(em, tenantId);
        const expired = await this.runs.lockExpiredLeases(
          em,
          tenantId,
          this.settings.sweepBatchSize,
        );
        const changes: Change[] = expired.map((run) => {
          const transition = transitionAfterLeaseExpiry(run, run.deduplicates, () =>
            retryDelayMs(run.attempt, run.retryPolicy, this.random),
          );
          return { run, transition, attempt: { error: transition.reason } };
        });
        await this.apply(em, changes);
        return changes;
      });
      for (const { run, transition } of done) {
        this.metrics.leaseExpiries.inc();
        this.recordTransition(run, transition);
      }
      swept += done.length;
    }
    return swept;
  }

  /**
   * The fenced transitions, the attempts' ends, and the jobs they make due, in the caller's
   * transaction, a statement each for the whole batch. Results are in the order of `changes`.
   */
  private async apply(em: EntityManager, changes: readonly Change[]): Promise<CompletionResult[]> {
    if (changes.length === 0) return [];
    const written = await this.runs.transition(
      em,
      changes.map(({ run, transition }) => ({
        runId: run.runId,
        fencingToken: run.fencingToken,
        transition,
      })),
    );
    await this.attempts.end(
      em,
      changes.map(({ run, transition, attempt }) => ({
        runId: run.runId,
        fencingToken: run.fencingToken,
        outcome: transition.attemptOutcome,
        httpStatus: attempt.httpStatus,
        durationMs: attempt.durationMs,
        error: transition.attemptOutcome === 'succeeded' ? null : (attempt.error ?? null),
      })),
    );
    const retries: Array<{ job: RunJob; startAfter: Date }> = [];
    const scheduleNext = new Set<string>();
    const results = changes.map(({ run, transition }): CompletionResult => {
      const row = written.get(run.runId);
      // Each row is locked under this fence since it was read: this cannot miss.
      if (!row) throw new Error(`run ${run.runId} left its fence while locked`);
      if (row.state === 'RETRY_WAIT' && row.nextAttemptAt) {
        retries.push({
          job: { runId: run.runId, tenantId: run.tenantId },
          startAfter: row.nextAttemptAt,
        });
      }
      if (row.state !== 'RETRY_WAIT' && run.overlapPolicy === 'buffer_one') {
        scheduleNext.add(run.scheduleId);
      }
      return {
        accepted: true,
        state: row.state,
        reason: transition.reason,
        nextAttemptAt: row.nextAttemptAt,
        retryInMs: transition.retryDelayMs,
      };
    });
    await this.ledger.publishEach(em, retries);
    for (const scheduleId of scheduleNext) await this.publishNextWaiting(em, scheduleId);
    return results;
  }

  /** A completion whose fence no longer holds: noted on its attempt, nothing else changes. */
  private async noteStale(em: EntityManager, completion: Completion): Promise<Run | null> {
    const { tenantId, runId, fencingToken, report } = completion;
    const current = await this.runs.findById(tenantId, runId, em);
    if (current) {
      const said = `${report.outcome}${report.error ? `: ${report.error}` : ''}`;
      await this.attempts.noteStale(em, tenantId, runId, fencingToken, {
        httpStatus: report.httpStatus,
        detail: `completion rejected: fencing token ${fencingToken} is no longer current (the run is ${current.state} under token ${current.fencingToken}); the worker reported ${said}`,
      });
    }
    return current;
  }

  private staleResult(completion: Completion, current: Run | null): CompletionResult {
    if (!current) return { accepted: false, state: null };
    this.metrics.staleCompletions.inc();
    this.logger.warn(
      {
        tenantId: completion.tenantId,
        scheduleId: current.scheduleId,
        runId: completion.runId,
        fencingToken: completion.fencingToken,
        current: current.fencingToken,
      },
      'stale completion rejected',
    );
    return { accepted: false, state: current.state };
  }

  private async refuse(
    em: EntityManager,
    tenantId: string,
    runId: string,
    reason: ClaimRefusal,
    d: ClaimDiagnosisRecord | null,
    options: ClaimOptions,
    rateWaitMs = 0,
  ): Promise<ClaimResult> {
    const refused = (requeuedInMs: number | null = null): ClaimResult => ({
      claimed: false,
      reason,
      state: d?.state ?? null,
      requeuedInMs,
    });
    const requeue = async (inMs: number): Promise<ClaimResult> => {
      if (!options.requeue || !d) return refused();
      const delay = Math.max(1, Math.ceil(inMs));
      await this.ledger.publish(em, [{ runId, tenantId }], new Date(d.dbNow.getTime() + delay));
      return refused(delay);
    };
    const end = async (state: 'CANCELLED' | 'FAILED' | 'SKIPPED', why: string) => {
      const ended = await this.runs.endWaiting(em, runId, tenantId, state, why);
      if (ended && d?.overlapPolicy === 'buffer_one' && d.reason !== WAITING_FOR_PREVIOUS) {
        await this.publishNextWaiting(em, d.scheduleId);
      }
      return { ...refused(), state: ended ? state : (d?.state ?? null) };
    };
    const shortly = () => this.settings.throttledRetryMs * (1 + this.random());
    switch (reason) {
      case 'not_found':
      case 'finished':
      case 'already_claimed':
        return refused();
      case 'cancelled':
        return end(
          'CANCELLED',
          d?.scheduleCancelled ? 'schedule cancelled' : 'cancelled by request',
        );
      case 'exhausted': {
        const why = d?.attemptsExhausted
          ? 'no attempts left'
          : 'the retry deadline passed before the next attempt could start';
        return end('FAILED', d?.reason ? `${d.reason}; ${why}` : why);
      }
      case 'not_due':
        // +1 ms: the job's Date carries milliseconds, the run's instant may carry microseconds.
        return requeue(d ? d.dueAt.getTime() - d.dbNow.getTime() + 1 : 0);
      case 'overlap':
        if (d?.state === 'QUEUED' && d.overlapPolicy === 'skip') return end('SKIPPED', 'overlap');
        if (d?.state === 'QUEUED' && d.overlapPolicy === 'buffer_one') {
          // No new job: the running run's transition publishes one (see apply()).
          await this.runs.noteWaitingReason(em, runId, tenantId, WAITING_FOR_PREVIOUS);
          return refused();
        }
        return requeue(shortly());
      case 'throttled':
        if (d?.state === 'QUEUED')
          await this.runs.noteWaitingReason(em, runId, tenantId, THROTTLED_REASON);
        return requeue(shortly());
      case 'rate_limited':
        if (d?.state === 'QUEUED')
          await this.runs.noteWaitingReason(em, runId, tenantId, RATE_LIMITED_REASON);
        return requeue(rateWaitMs);
      case 'contended':
        return requeue(shortly());
    }
  }

  /**
   * A run of a buffer_one schedule ended: the oldest run waiting behind it gets its job now, in
   * the transaction that ended the run.
   */
  private async publishNextWaiting(em: EntityManager, scheduleId: string): Promise<void> {
    const waiting = await this.runs.nextWaitingRun(em, scheduleId);
    if (waiting) await this.ledger.publish(em, [waiting]);
  }

  private logClaimed(claim: Claim): void {
    // Debug: at full speed this is a line per run, and "attempt ended" already names each one.
    this.logger.debug(
      {
        tenantId: claim.tenantId,
        scheduleId: claim.scheduleId,
        runId: claim.runId,
        attempt: claim.attempt,
        fencingToken: claim.fencingToken,
      },
      'run claimed',
    );
  }

  private recordTransition(run: HeldRunRecord, transition: Transition): void {
    this.metrics.attempts.inc({ outcome: transition.attemptOutcome });
    if (transition.state === 'UNKNOWN') this.metrics.unknownOutcomes.inc();
    const context = {
      tenantId: run.tenantId,
      scheduleId: run.scheduleId,
      runId: run.runId,
      attempt: run.attempt,
      fencingToken: run.fencingToken,
      outcome: transition.attemptOutcome,
      state: transition.state,
    };
    if (transition.attemptOutcome === 'lease_lost') this.logger.warn(context, 'lease expired');
    else this.logger.log(context, 'attempt ended');
  }
}
