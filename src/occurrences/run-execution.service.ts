import { Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AttemptsService } from '../attempts/attempts.service';
import { retryDelayMs } from '../targets/http/outcome-classifier';
import { ExecutionMetrics } from './execution-metrics';
import { ExecutionSettings } from './execution-settings';
import { DispatchBudget } from '../tenants/dispatch-budget';
import { OccurrenceLedger } from './occurrence-ledger';
import {
  ClaimDiagnosisRecord,
  HeldRunRecord,
  OccurrencesRepository,
} from './occurrences.repository';
import type {
  AttemptReport,
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
   * One conditional UPDATE decides (see CLAIM_RUN); the attempt row is appended in the same
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
      // Under the tenant lock permits only come back, so a second try settles any race.
      // The rate budget is read first and spent only on success, all under the tenant lock.
      const rateWaitMs = await this.budget.waitMs(em, tenantId);
      for (let round = 0; round < 2; round++) {
        const claim =
          rateWaitMs > 0
            ? null
            : await this.runs.claim(em, runId, tenantId, workerId, this.settings.leaseMs);
        if (claim) {
          await this.budget.spend(em, tenantId);
          await this.attempts.start(em, {
            runId,
            attemptNo: claim.attempt,
            tenantId,
            workerId,
            fencingToken: claim.fencingToken,
          });
          return { claimed: true, claim };
        }
        diagnosis = await this.runs.diagnoseClaim(em, runId, tenantId);
        const reason = claimRefusal(diagnosis) ?? (rateWaitMs > 0 ? 'rate_limited' : null);
        if (reason) {
          return this.refuse(em, tenantId, runId, reason, diagnosis, options, rateWaitMs);
        }
      }
      return this.refuse(em, tenantId, runId, 'contended', diagnosis, options);
    });
    if (result.claimed) {
      const { claim } = result;
      this.logger.log(
        {
          tenantId,
          scheduleId: claim.scheduleId,
          runId,
          attempt: claim.attempt,
          fencingToken: claim.fencingToken,
        },
        'run claimed',
      );
    } else {
      this.metrics.claimsRefused.inc({ reason: result.reason });
      this.logger.debug({ tenantId, runId, reason: result.reason }, 'claim refused');
    }
    return result;
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
    const outcome = await this.runs.transaction(async (em) => {
      await this.runs.lockScheduleOfRun(em, runId, tenantId);
      const held = await this.runs.lockHeld(em, runId, tenantId, fencingToken);
      if (!held) {
        const current = await this.runs.findById(tenantId, runId, em);
        if (current) {
          const said = `${report.outcome}${report.error ? `: ${report.error}` : ''}`;
          await this.attempts.noteStale(em, tenantId, runId, fencingToken, {
            httpStatus: report.httpStatus,
            detail: `completion rejected: fencing token ${fencingToken} is no longer current (the run is ${current.state} under token ${current.fencingToken}); the worker reported ${said}`,
          });
        }
        return { stale: true as const, current };
      }
      const transition = transitionAfterAttempt(held, report, () =>
        retryDelayMs(held.attempt, held.retryPolicy, this.random, report.retryAfterMs),
      );
      const applied = await this.apply(em, held, transition, {
        httpStatus: report.httpStatus,
        durationMs: report.durationMs,
        error: report.error,
      });
      return { stale: false as const, held, transition, applied };
    });
    if (outcome.stale) {
      if (!outcome.current) return { accepted: false, state: null };
      this.metrics.staleCompletions.inc();
      this.logger.warn(
        {
          tenantId,
          scheduleId: outcome.current.scheduleId,
          runId,
          fencingToken,
          current: outcome.current.fencingToken,
        },
        'stale completion rejected',
      );
      return { accepted: false, state: outcome.current.state };
    }
    this.recordTransition(outcome.held, outcome.transition);
    return outcome.applied;
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
        const transitions: Array<{ run: HeldRunRecord; transition: Transition }> = [];
        for (const run of expired) {
          const transition = transitionAfterLeaseExpiry(run, run.deduplicates, () =>
            retryDelayMs(run.attempt, run.retryPolicy, this.random),
          );
          await this.apply(em, run, transition, { error: transition.reason });
          transitions.push({ run, transition });
        }
        return transitions;
      });
      for (const { run, transition } of done) {
        this.metrics.leaseExpiries.inc();
        this.recordTransition(run, transition);
      }
      swept += done.length;
    }
    return swept;
  }

  /** The fenced transition, the attempt's end, and the jobs it makes due, in one transaction. */
  private async apply(
    em: EntityManager,
    held: HeldRunRecord,
    transition: Transition,
    attempt: { httpStatus?: number | null; durationMs?: number | null; error?: string | null },
  ): Promise<CompletionResult> {
    const written = await this.runs.transition(em, held.runId, held.fencingToken, transition);
    // The row is locked under this fence since it was read: this cannot miss.
    if (!written) throw new Error(`run ${held.runId} left its fence while locked`);
    await this.attempts.end(em, held.runId, held.fencingToken, {
      outcome: transition.attemptOutcome,
      httpStatus: attempt.httpStatus,
      durationMs: attempt.durationMs,
      error: transition.attemptOutcome === 'succeeded' ? null : (attempt.error ?? null),
    });
    if (written.state === 'RETRY_WAIT' && written.nextAttemptAt) {
      await this.ledger.publish(
        em,
        [{ runId: held.runId, tenantId: held.tenantId }],
        written.nextAttemptAt,
      );
    }
    if (written.state !== 'RETRY_WAIT' && held.overlapPolicy === 'buffer_one') {
      await this.publishNextWaiting(em, held.scheduleId);
    }
    return {
      accepted: true,
      state: written.state,
      reason: transition.reason,
      nextAttemptAt: written.nextAttemptAt,
      retryInMs: transition.retryDelayMs,
    };
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
