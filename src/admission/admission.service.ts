import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import type { Tx } from '../database';
import { EventsService } from '../events';
import { RunHandoff, type PendingHandoff } from '../handoff';
import { Lifecycle } from '../observability';
import { claimBlockedByOverlap, OverlapService } from '../overlap';
import { RunJobsRepository, type RunToPublish } from '../queue';
import type { RunReason } from '../run-vocabulary';
import { decideAdmission, type AdmissionCandidate, type FleetRoom } from './admission-plan';
import { shareFleet, type SlotDemand } from './fleet-share';
import { FleetTurns } from './fleet-turns';
import {
  AdmissionRepository,
  type ClaimDiagnosisRecord,
  type TenantAdmission,
} from './admission.repository';
import type { Claim, ClaimOptions, ClaimRefusal, ClaimRequest, ClaimResult } from './claim';
import { claimRefusal } from './claim-refusal';
import { nextSummaryGapMs } from './summary-cadence';

/** A run about to be created, as admission marks it. */
export interface NewRunToAdmit extends AdmissionCandidate {
  scheduleId: string;
  admitted?: boolean;
  reason: RunReason | null;
  /** Set to FAILED (target_gone) when its target is disabled: it is recorded, never started. */
  state: 'QUEUED' | 'SKIPPED' | 'FAILED';
}

/** What one round of the admitter did (AdmissionService.admitWaiting). */
export interface AdmitterRound {
  admitted: number;
  /** Tenants it found with runs waiting (at most a round's worth). */
  tenantsWaiting: number;
}

/**
 * Admission: the claim. A run starts (RUNNING under a new fencing token, its attempt appended)
 * only when its tenant has a permit and a rate token and its schedule's overlap policy allows
 * it, all decided by one statement under the tenant's permit lock (see CLAIM_RUNS). The built-in
 * worker and the HTTP worker contract both claim here.
 */
@Injectable()
export class AdmissionService {
  /** Source of the jitter on a throttled run's requeue. */
  private readonly random: () => number = Math.random;
  /** The last tenant the admitter's previous round reached, when it could not take them all. */
  private turn: string | null = null;
  /** Per tenant, the last target whose waiting list the previous round reached. */
  private readonly targetTurn = new Map<string, string | null>();
  /** When the admitter may report the waiting lists next (see nextSummaryGapMs). */
  private nextSummaryAt = -Infinity;
  /** How much of a saturated fleet each waiting tenant has had (see FleetTurns). */
  private readonly turns = new FleetTurns();
  /** Told when this process decides that new runs wait (the admitter beside it: its cadence). */
  private readonly waitingDecided = new Set<() => void>();

  constructor(
    private readonly admission: AdmissionRepository,
    private readonly overlap: OverlapService,
    private readonly jobs: RunJobsRepository,
    private readonly events: EventsService,
    private readonly lifecycle: Lifecycle,
    private readonly handoff: RunHandoff,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The batched claim's statement with one run decides, under the tenant's and the schedule's
   * locks; a run it does not take is diagnosed and refused with the reason. A refused run that
   * can never run is ended here (CANCELLED, FAILED, SKIPPED); one that must wait shows why.
   */
  async claim(
    tenantId: string,
    runId: string,
    workerId: string,
    options: ClaimOptions = {},
  ): Promise<ClaimResult> {
    const run = { runId, tenantId };
    const result = await this.admission.transaction(async (tx): Promise<ClaimResult> => {
      await this.admission.lockForClaim(tx, runId, tenantId);
      let diagnosis: ClaimDiagnosisRecord | null = null;
      // Under the tenant lock permits and rate tokens only come back, so a second try settles
      // any race.
      for (let round = 0; round < 2; round++) {
        const [claim] = await this.admission.claimMany(
          tx,
          [run],
          workerId,
          this.config.execution.leaseMs,
        );
        if (claim) {
          return { claimed: true, claim };
        }
        diagnosis = await this.admission.diagnose(tx, runId, tenantId);
        const reason = claimRefusal(diagnosis);
        if (reason) return this.refuse(tx, run, reason, diagnosis, options);
      }
      return this.refuse(tx, run, 'contended', diagnosis, options);
    });
    if (result.claimed) {
      this.claimed(result.claim);
    } else {
      this.lifecycle.emit({
        kind: 'claim.refused',
        tenantId,
        runId,
        reason: result.reason,
        job: options.requeue === true,
      });
    }
    return result;
  }

  /**
   * The fast path of a busy worker: claims the admitted runs of a batch (of any tenants) in one
   * transaction of two statements and one wait (the schedule locks overlap needs, then
   * CLAIM_ADMITTED_RUNS, the COMMIT behind them: claimManyAtCommit). No tenant
   * lock: an admitted run holds its permit and token already. Runs it did not take are not
   * refused: the caller claims each alone with claim(), which says why and parks, requeues or
   * ends it.
   */
  async claimBatch(runs: readonly ClaimRequest[], workerId: string): Promise<Claim[]> {
    if (runs.length === 0) return [];
    // The claims are answered with the COMMIT (claimManyAtCommit): the transaction is one wait.
    const claiming = await this.admission.transaction(async (tx) => ({
      claims: this.admission.claimManyAtCommit(tx, runs, workerId, this.config.execution.leaseMs),
    }));
    const claims = await claiming.claims;
    for (const claim of claims) this.claimed(claim);
    return claims;
  }

  /**
   * Admission of runs about to be created in `tx` (the poller's batch, a manual trigger), decided
   * before their insert so each row is written once: under their tenants' permit locks (held to
   * the commit), each run is marked `admitted`, or gets the reason it waits for its tenant's
   * budget or for room in the fleet. The caller inserts them as marked, then calls `admitted()`
   * with those it created admitted.
   */
  async decideNew(tx: Tx, runs: readonly NewRunToAdmit[]): Promise<void> {
    if (runs.length === 0) return;
    const tenantIds = runs.map((run) => run.tenantId);
    const { tenants, targets, fleetBacklog } = await this.admission.newRunBudgetsBehindPermitLocks(
      tx,
      tenantIds,
      runs.map((run) => run.scheduleId),
      runs.some((run) => run.priority !== 'high'),
    );
    const fleet = fleetBacklog === null ? { free: null } : this.roomBeside(fleetBacklog);
    const decisions = decideAdmission(runs, tenants, fleet, targets);
    let waits = false;
    runs.forEach((run, i) => {
      const decision = decisions[i];
      if (decision.admitted) run.admitted = true;
      else if ('ends' in decision) {
        run.state = 'FAILED';
        run.reason = decision.ends;
      } else {
        run.reason = decision.waitsFor;
        waits = true;
      }
    });
    if (waits) for (const listener of this.waitingDecided) listener();
  }

  /**
   * Calls `listener` whenever this process decides that new runs wait for admission (before the
   * deciding transaction commits); returns its removal.
   */
  onWaitingDecided(listener: () => void): () => void {
    this.waitingDecided.add(listener);
    return () => this.waitingDecided.delete(listener);
  }

  /**
   * Runs created admitted in `tx`: their tokens (their tenants' and their targets') are spent
   * and their jobs published. With `handOff`, for a worker beside the caller when one has room
   * (RunHandoff.publish): the caller gives them to it after its commit (RunHandoff.deliver).
   */
  async admitted(
    tx: Tx,
    runs: readonly RunToPublish[],
    handOff = false,
  ): Promise<PendingHandoff | null> {
    if (runs.length === 0) return null;
    // Neither needs the other's answer: written together, one wait.
    const [, pending] = await Promise.all([
      this.admission.spendTokensOfNewRuns(tx, runs),
      handOff ? this.handoff.publish(tx, runs) : this.jobs.publish(tx, runs).then(() => null),
    ]);
    return pending;
  }

  /**
   * The admitter's round: the tenants with runs waiting for admission (at most
   * `tenantsPerRound`, taking turns when there are more), the fleet's room shared among them by
   * weight (shareFleet), then for each one transaction under its permit lock that admits what it
   * can afford now and its share allows, in its admission order, and publishes their jobs;
   * waiting runs past their start deadline are SKIPPED. Returns how many runs were admitted and
   * how many tenants it found waiting.
   */
  async admitWaiting(): Promise<AdmitterRound> {
    const { admission } = this.config;
    const { tenants, pastStartDeadline } = await this.admission.waitingAtAGlance(
      admission.tenantsPerRound,
      this.turn,
    );
    this.turn = tenants.length < admission.tenantsPerRound ? null : (tenants.at(-1) ?? null);
    // Only when the look saw a run past its deadline: a round with nothing to do is one statement.
    const skipped = pastStartDeadline
      ? await this.admission.transaction(async (tx) => {
          const ids = await this.admission.skipPastStartDeadline(tx, admission.batchSize);
          await this.events.recordRunEvents(tx, ids);
          return ids.length;
        })
      : 0;
    if (skipped > 0) this.lifecycle.emit({ kind: 'runs.deadline_skipped', count: skipped });
    const fleet = await this.fleetShares(tenants);
    let admitted = 0;
    let targetGone = 0;
    const throughFleet = new Map<string, number>();
    for (const tenantId of tenants) {
      const round = await this.admission.transaction(async (tx) => {
        await this.admission.lockTenantsPermits(tx, [tenantId]);
        const share = fleet?.shares.get(tenantId) ?? admission.batchSize;
        // The targets' waiting lists first: their runs waited longest for what frees now.
        const fromTargets = await this.admitFromTargets(tx, tenantId, share);
        const left = Math.max(0, admission.batchSize - fromTargets.admitted.length);
        const fromTenant = await this.admission.admitWaiting(
          tx,
          tenantId,
          left,
          Math.max(0, share - fromTargets.admitted.length),
          admission.rateChunkMs,
        );
        const runs = [...fromTargets.admitted, ...fromTenant.admitted];
        // A worker beside this relay with room takes them without a fetch (handoff/).
        const handing = await this.handoff.publish(tx, runs);
        const ended = [...fromTargets.ended, ...fromTenant.ended];
        await this.events.recordRunEvents(tx, ended);
        return { runs, ended: ended.length, handing };
      });
      this.handoff.deliver(round.handing);
      admitted += round.runs.length;
      targetGone += round.ended;
      throughFleet.set(tenantId, round.runs.filter((run) => run.priority !== 'high').length);
    }
    if (fleet) this.turns.served(fleet.demands, throughFleet);
    if (admitted > 0) this.lifecycle.emit({ kind: 'runs.admitted', count: admitted });
    if (targetGone > 0) this.lifecycle.emit({ kind: 'runs.target_gone', count: targetGone });
    // The waiting lists' summary (a metric) counts every waiting run: once a second at most,
    // less often when that count grows slow.
    const startedAt = performance.now();
    if (startedAt >= this.nextSummaryAt) {
      // Not again while this one counts (a round may be called beside the loop).
      this.nextSummaryAt = Infinity;
      try {
        const summary = await this.admission.waitingSummary();
        this.lifecycle.emit({ kind: 'admission.waiting', ...summary });
      } finally {
        const tookMs = performance.now() - startedAt;
        this.nextSummaryAt = startedAt + nextSummaryGapMs(tookMs);
      }
    }
    return { admitted, tenantsWaiting: tenants.length };
  }

  /**
   * One tenant's targets' waiting lists, under its permit lock: the runs of a disabled target
   * end (target_gone, a bounded batch per round), a target with room admits in its order as
   * the tenant's budget allows (at most `limit` in all). Targets take turns when more wait than
   * a round visits, so the cost of a round is bounded by the round, not by the lists.
   */
  private async admitFromTargets(
    tx: Tx,
    tenantId: string,
    limit: number,
  ): Promise<{ admitted: RunToPublish[]; ended: string[] }> {
    const { tenantsPerRound, batchSize } = this.config.admission;
    const after = this.targetTurn.get(tenantId) ?? null;
    const targets = await this.admission.targetsWaiting(tx, tenantId, tenantsPerRound, after);
    if (targets.length < tenantsPerRound) this.targetTurn.delete(tenantId);
    else this.targetTurn.set(tenantId, targets.at(-1)?.targetId ?? null);
    const admitted: RunToPublish[] = [];
    const ended: string[] = [];
    for (const target of targets) {
      if (target.gone) {
        ended.push(
          ...(await this.admission.endRunsOfGoneTarget(tx, tenantId, target.targetId, batchSize)),
        );
        continue;
      }
      const left = limit - admitted.length;
      if (target.room <= 0 || left <= 0) continue;
      admitted.push(
        ...(await this.admission.admitTargetWaiting(tx, tenantId, target.targetId, left)),
      );
    }
    return { admitted, ended };
  }

  /** The fleet's room for normal/low runs now (see FLEET_BACKLOG). */
  private async fleetRoom(): Promise<FleetRoom> {
    return this.roomBeside(await this.admission.fleetBacklog());
  }

  /** The fleet's room beside `backlog` admitted runs waiting for a worker. */
  private roomBeside(backlog: number): FleetRoom {
    return { free: Math.max(0, this.config.admission.fleetBacklog - backlog) };
  }

  /**
   * Each waiting tenant's share of the fleet's room (by the tenants' turns so far: FleetTurns),
   * or null when the room fits them all.
   */
  private async fleetShares(
    tenants: readonly string[],
  ): Promise<{ shares: Map<string, number>; demands: SlotDemand[] } | null> {
    if (tenants.length === 0) return null;
    const { free } = await this.fleetRoom();
    const demands = await this.admission.waitingDemands(tenants, this.config.admission.batchSize);
    const wanted = demands.reduce((sum, d) => sum + d.wants, 0);
    if (free === null || wanted <= free) return null;
    return { shares: shareFleet(this.turns.weigh(demands), free), demands };
  }

  /** Where tenant `tenantId` stands in admission now (its usage report). */
  tenantAdmission(tenantId: string): Promise<TenantAdmission> {
    return this.admission.tenantAdmission(tenantId);
  }

  /**
   * Holds tenant `tenantId`'s permit lock until `tx` ends: whatever `tx` does then is ordered
   * with the tenant's claims (the lease sweeper: a claim that makes a run wait for its turn and
   * the sweep that hands the turn over never interleave).
   */
  async holdTenantPermits(tx: Tx, tenantId: string): Promise<void> {
    await this.admission.lockTenantsPermits(tx, [tenantId]);
  }

  private async refuse(
    tx: Tx,
    run: ClaimRequest,
    reason: ClaimRefusal,
    d: ClaimDiagnosisRecord | null,
    options: ClaimOptions,
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
      await this.jobs.publish(
        tx,
        [{ ...run, scheduledAt: d.scheduledAt, priority: d.priority }],
        new Date(d.dbNow.getTime() + delay),
      );
      return refused(delay);
    };
    const end = async (
      state: 'CANCELLED' | 'FAILED' | 'SKIPPED',
      why: RunReason,
      detail: string | null = d?.reasonDetail ?? null,
    ) => {
      if (!d) return refused();
      const ended = await this.admission.endWaiting(tx, run, state, why, detail);
      if (ended) {
        if (state !== 'CANCELLED') await this.events.recordRunEvents(tx, [run.runId]);
        await this.overlap.runEnded(tx, {
          scheduleId: d.scheduleId,
          overlapPolicy: d.overlapPolicy,
          endedWhileWaiting: d.reason === 'waiting_for_previous',
        });
      }
      return { ...refused(), state: ended ? state : d.state };
    };
    const shortly = () => this.config.execution.throttledRetryMs * (1 + this.random());
    switch (reason) {
      case 'not_found':
      case 'finished':
      case 'already_claimed':
        return refused();
      case 'cancelled_by_request':
      case 'schedule_cancelled':
        return end('CANCELLED', reason);
      case 'attempts_exhausted':
      case 'retry_deadline_exceeded':
        return end('FAILED', reason);
      case 'deadline_exceeded':
        this.lifecycle.emit({ kind: 'runs.deadline_skipped', count: 1 });
        return end('SKIPPED', reason);
      case 'not_due':
        // +1 ms: the job's Date carries milliseconds, the run's instant may carry microseconds.
        return requeue(d ? d.dueAt.getTime() - d.dbNow.getTime() + 1 : 0);
      case 'overlap': {
        if (!d || (d.state !== 'QUEUED' && d.state !== 'RETRY_WAIT')) return refused();
        switch (claimBlockedByOverlap(d.overlapPolicy, d.state)) {
          case 'skip':
            return end('SKIPPED', 'overlap');
          case 'wait':
            // No new job: the running run's end hands the turn over (see the overlap module).
            await this.admission.park(tx, run, 'waiting_for_previous');
            return refused();
          case 'retry_later':
            return requeue(shortly());
        }
        return refused();
      }
      case 'target_gone':
        return end('FAILED', reason, d?.targetDisabledReason ?? null);
      case 'target_backoff':
      case 'throttled_target':
        if (d?.state === 'QUEUED') {
          // Waits in its target's list, at no cost, until the admitter takes it: no new job.
          await this.admission.park(tx, run, reason);
          return refused();
        }
        // A retry comes back once the backoff has passed (or shortly, for room at the target).
        return requeue(reason === 'target_backoff' && d ? d.targetBackoffMs + 1 : shortly());
      case 'throttled_concurrency':
      case 'throttled_rate':
        if (d?.state === 'QUEUED') {
          // Waits in the ledger, at no cost, until the admitter takes it: no new job.
          await this.admission.park(tx, run, reason);
          return refused();
        }
        // A retry that cannot start yet comes back when a token or a permit may be free.
        return requeue(reason === 'throttled_rate' ? (d?.rateWaitMs ?? shortly()) : shortly());
      case 'contended':
        return requeue(shortly());
    }
  }

  private claimed(claim: Claim): void {
    this.lifecycle.emit({
      kind: 'run.claimed',
      run: {
        tenantId: claim.tenantId,
        scheduleId: claim.scheduleId,
        runId: claim.runId,
        attempt: claim.attempt,
        fencingToken: claim.fencingToken,
      },
      priority: claim.priority,
    });
  }
}
