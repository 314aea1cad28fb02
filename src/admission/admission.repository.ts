import { Injectable } from '@nestjs/common';
import { instantBounds, SqlRunner, type Row, type Tx } from '../database';
import { CONCURRENT_POLICIES, type OverlapPolicy } from '../overlap';
import {
  priorityOfRank,
  type AdmissionWait,
  type RunPriority,
  type RunReason,
  type RunState,
  type WaitReason,
} from '../run-vocabulary';
import type { RunToPublish } from '../queue';
import type { Claim, ClaimRequest } from './claim';
import type { TargetBudget, TenantBudget } from './admission-plan';
import type { ClaimDiagnosis } from './claim-refusal';
import {
  ADMIT_TARGET_WAITING,
  ADMIT_WAITING,
  CLAIM_ADMITTED_RUNS,
  CLAIM_RUNS,
  END_RUNS_OF_GONE_TARGET,
  TARGETS_WAITING,
  FLEET_BACKLOG,
  DIAGNOSE_CLAIM,
  END_WAITING_RUN,
  LOCK_SCHEDULES_OF_CLAIMS,
  LOCK_TENANT_AND_SCHEDULE_OF_RUN,
  LOCK_TENANT_PERMITS,
  LOCK_TENANTS_PERMITS,
  PARK_RUN,
  SKIP_PAST_START_DEADLINE,
  SPEND_TOKENS_OF_NEW_RUNS,
  TENANT_ADMISSION,
  NEW_RUN_BUDGETS,
  TENANTS_WAITING,
  WAITING_DEMANDS,
  WAITING_SUMMARY,
} from './admission.sql';
import type { SlotDemand } from './fleet-share';

/** What the waiting list looks like, for the metrics: runs by reason and the oldest's age. */
export interface WaitingSummary {
  runs: Partial<Record<AdmissionWait, number>>;
  oldestSeconds: number;
}

/** One tenant's place in admission: permits held, runs waiting by reason, oldest wait. */
export interface TenantAdmission {
  holding: number;
  waiting: Partial<Record<AdmissionWait, number>>;
  oldestWaitingSeconds: number;
}

/** A target with runs in its waiting list, as the admitter finds it (see TARGETS_WAITING). */
export interface WaitingTarget {
  targetId: string;
  gone: boolean;
  room: number;
}

/** What the tenant's admitter did with the runs it read (see ADMIT_WAITING). */
export interface TenantListRound {
  admitted: RunToPublish[];
  /** Moved to their target's waiting list. */
  deferred: number;
  /** Ended FAILED target_gone (their ids). */
  ended: string[];
}

/** ClaimDiagnosis with what acting on the refusal needs. */
export interface ClaimDiagnosisRecord extends ClaimDiagnosis {
  scheduleId: string;
  scheduledAt: Date;
  reason: RunReason | null;
  reasonDetail: string | null;
  dueAt: Date;
  overlapPolicy: OverlapPolicy;
  priority: RunPriority;
  dbNow: Date;
  targetDisabledReason: string | null;
}

@Injectable()
export class AdmissionRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /** The permit locks of several tenants, in order (see LOCK_TENANTS_PERMITS). */
  async lockTenantsPermits(tx: Tx, tenantIds: readonly string[]): Promise<void> {
    await this.sql.rows(LOCK_TENANTS_PERMITS, [tenantIds], tx);
  }

  /** A single claim's locks: the tenant's permits, then the run's schedule. */
  async lockForClaim(tx: Tx, runId: string, tenantId: string): Promise<void> {
    const [row] = await this.sql.rows(LOCK_TENANT_AND_SCHEDULE_OF_RUN, [runId, tenantId], tx);
    // An unknown run locks nothing here; the claim then finds nothing to claim either.
    if (!row) await this.sql.rows(LOCK_TENANT_PERMITS, [tenantId], tx);
  }

  /**
   * The fast claim of admitted runs behind their schedules' locks (LOCK_SCHEDULES_OF_CLAIMS, then
   * CLAIM_ADMITTED_RUNS), written as the transaction's last statements (SqlRunner.rowsAtCommit):
   * the server reads a statement only once it has answered the one before, so the claim still
   * runs, and takes its snapshot, after the locks are granted, and the COMMIT goes right behind
   * them. The whole transaction is one wait (BEGIN travels with them: SqlRunner.transaction);
   * the claims are answered with its COMMIT, and the transaction throws if any statement failed.
   */
  claimManyAtCommit(
    tx: Tx,
    runs: readonly ClaimRequest[],
    workerId: string,
    leaseMs: number,
  ): Promise<Claim[]> {
    void this.sql.rowsAtCommit(
      LOCK_SCHEDULES_OF_CLAIMS,
      [runs.map((run) => run.runId), CONCURRENT_POLICIES, ...runsRange(runs)],
      tx,
    );
    // Admitted runs only (see CLAIM_ADMITTED_RUNS): this claim holds no tenant's permit lock.
    const claims = this.sql
      .rowsAtCommit(CLAIM_ADMITTED_RUNS, claimParameters(runs, workerId, leaseMs), tx)
      .then((rows) => rows.map(toClaim));
    // Read once the transaction has committed; if it failed, the transaction throws instead.
    claims.catch(() => undefined);
    return claims;
  }

  /**
   * What can be claimed of the runs (see CLAIM_RUNS), admitting those not admitted yet: the
   * caller holds their tenants' permit locks.
   */
  async claimMany(
    tx: Tx,
    runs: readonly ClaimRequest[],
    workerId: string,
    leaseMs: number,
  ): Promise<Claim[]> {
    const rows = await this.sql.rows(CLAIM_RUNS, claimParameters(runs, workerId, leaseMs), tx);
    return rows.map(toClaim);
  }

  /**
   * newRunBudgets behind the tenants' permit locks (LOCK_TENANTS_PERMITS first), written
   * together without waiting for the locks' answer: the server reads the budgets' statement only
   * after answering the locks', so it still takes its snapshot once they are granted.
   */
  async newRunBudgetsBehindPermitLocks(
    tx: Tx,
    tenantIds: readonly string[],
    scheduleIds: readonly string[],
    withFleetBacklog: boolean,
  ): ReturnType<AdmissionRepository['newRunBudgets']> {
    const [, budgets] = await Promise.all([
      this.lockTenantsPermits(tx, tenantIds),
      this.newRunBudgets(tx, tenantIds, scheduleIds, withFleetBacklog),
    ]);
    return budgets;
  }

  /**
   * What admitting new runs needs, read under their tenants' permit locks (see NEW_RUN_BUDGETS):
   * the tenants' budgets, the budgets of the limited targets by schedule, and the fleet's
   * backlog when asked for (else null).
   */
  private async newRunBudgets(
    tx: Tx,
    tenantIds: readonly string[],
    scheduleIds: readonly string[],
    withFleetBacklog: boolean,
  ): Promise<{
    tenants: Map<string, TenantBudget>;
    targets: Map<string, TargetBudget>;
    fleetBacklog: number | null;
  }> {
    const [row] = await this.sql.rows<{
      tenants: Array<{
        tenant_id: string;
        permits: number;
        tokens: number;
        waiting: boolean;
        weight: number;
        holding: number;
      }>;
      targets: Array<{
        schedule_id: string;
        target_id: string;
        room: number;
        gone: boolean;
        backing_off: boolean;
        waiting: boolean;
      }>;
      fleet_backlog: number | null;
    }>(NEW_RUN_BUDGETS, [[...new Set(tenantIds)], [...new Set(scheduleIds)], withFleetBacklog], tx);
    return {
      tenants: new Map(
        row.tenants.map((r) => [
          r.tenant_id,
          {
            permits: Number(r.permits),
            tokens: Number(r.tokens),
            waiting: r.waiting,
            weight: Number(r.weight),
            holding: Number(r.holding),
          },
        ]),
      ),
      targets: new Map(
        row.targets.map((r) => [
          r.schedule_id,
          {
            targetId: r.target_id,
            room: Number(r.room),
            gone: r.gone,
            backingOff: r.backing_off,
            waiting: r.waiting,
          },
        ]),
      ),
      fleetBacklog: row.fleet_backlog,
    };
  }

  /** Targets of the tenant with runs waiting for them (see TARGETS_WAITING). */
  async targetsWaiting(
    tx: Tx,
    tenantId: string,
    limit: number,
    after: string | null,
  ): Promise<WaitingTarget[]> {
    const rows = await this.sql.rows<{ target_id: string; gone: boolean; room: number }>(
      TARGETS_WAITING,
      [tenantId, limit, after],
      tx,
    );
    return rows.map((r) => ({ targetId: r.target_id, gone: r.gone, room: Number(r.room) }));
  }

  /** The admitter's step for one target's waiting list (see ADMIT_TARGET_WAITING). */
  async admitTargetWaiting(
    tx: Tx,
    tenantId: string,
    targetId: string,
    limit: number,
  ): Promise<RunToPublish[]> {
    const rows = await this.sql.rows<{
      id: string;
      tenant_id: string;
      priority: number;
      scheduled_at: Date;
      target_id: string | null;
    }>(ADMIT_TARGET_WAITING, [tenantId, targetId, limit], tx);
    return rows.map(toRunToPublish);
  }

  /** A disabled target's waiting runs end FAILED target_gone (see END_RUNS_OF_GONE_TARGET). */
  async endRunsOfGoneTarget(
    tx: Tx,
    tenantId: string,
    targetId: string,
    limit: number,
  ): Promise<string[]> {
    const rows = await this.sql.rows(END_RUNS_OF_GONE_TARGET, [tenantId, targetId, limit], tx);
    return rows.map((row) => row.id as string);
  }

  /** Admitted normal/low runs waiting in the queue for a worker (see FLEET_BACKLOG). */
  async fleetBacklog(): Promise<number> {
    const [row] = await this.sql.rows<{ backlog: number }>(FLEET_BACKLOG);
    return row?.backlog ?? 0;
  }

  /** What each waiting tenant could take of the fleet this round (see WAITING_DEMANDS). */
  async waitingDemands(tenantIds: readonly string[], limit: number): Promise<SlotDemand[]> {
    const rows = await this.sql.rows<{
      tenant_id: string;
      weight: number;
      holding: number;
      wants: number;
    }>(WAITING_DEMANDS, [tenantIds, limit]);
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      weight: r.weight,
      holding: r.holding,
      wants: r.wants,
    }));
  }

  /**
   * One token of its tenant's and one of its target's per run created admitted in `tx` (see
   * SPEND_TOKENS_OF_NEW_RUNS).
   */
  async spendTokensOfNewRuns(
    tx: Tx,
    runs: ReadonlyArray<{ tenantId: string; runId: string; scheduledAt: Date }>,
  ): Promise<void> {
    if (runs.length === 0) return;
    await this.sql.rows(
      SPEND_TOKENS_OF_NEW_RUNS,
      [
        runs.map((run) => run.tenantId),
        runs.map((run) => run.runId),
        runs.map((run) => run.scheduledAt),
      ],
      tx,
    );
  }

  /**
   * Up to `limit` tenants with runs waiting for admission, after tenant `after`, and whether any
   * waiting run is past its start deadline (see TENANTS_WAITING).
   */
  async waitingAtAGlance(limit: number, after: string | null = null): Promise<WaitingAtAGlance> {
    const [row] = await this.sql.rows<{ tenants: string[]; past_start_deadline: boolean }>(
      TENANTS_WAITING,
      [limit, after],
    );
    return { tenants: row.tenants, pastStartDeadline: row.past_start_deadline };
  }

  /** The admitter's step for one tenant (see ADMIT_WAITING). */
  async admitWaiting(
    tx: Tx,
    tenantId: string,
    limit: number,
    notHighLimit: number,
    rateChunkMs: number,
  ): Promise<TenantListRound> {
    const rows = await this.sql.rows<{
      id: string;
      tenant_id: string;
      priority: number;
      scheduled_at: Date;
      target_id: string | null;
      outcome: 'admitted' | 'waits' | 'ended';
    }>(ADMIT_WAITING, [tenantId, limit, notHighLimit, rateChunkMs], tx);
    return {
      admitted: rows.filter((r) => r.outcome === 'admitted').map(toRunToPublish),
      deferred: rows.filter((r) => r.outcome === 'waits').length,
      ended: rows.filter((r) => r.outcome === 'ended').map((r) => r.id),
    };
  }

  /** Waiting runs past their start deadline end SKIPPED (see SKIP_PAST_START_DEADLINE). */
  async skipPastStartDeadline(tx: Tx, limit: number): Promise<string[]> {
    const rows = await this.sql.rows(SKIP_PAST_START_DEADLINE, [limit], tx);
    return rows.map((row) => row.id as string);
  }

  async waitingSummary(): Promise<WaitingSummary> {
    const rows = await this.sql.rows<{
      reason: AdmissionWait;
      runs: number;
      oldest_seconds: number;
    }>(WAITING_SUMMARY);
    return {
      runs: Object.fromEntries(rows.map((r) => [r.reason, r.runs])),
      oldestSeconds: Math.max(0, ...rows.map((r) => r.oldest_seconds)),
    };
  }

  /** One tenant's permits held and waiting runs (see TENANT_ADMISSION). */
  async tenantAdmission(tenantId: string): Promise<TenantAdmission> {
    const rows = await this.sql.rows<{
      reason: AdmissionWait | null;
      runs: number;
      oldest_seconds: number;
    }>(TENANT_ADMISSION, [tenantId]);
    const waiting = rows.filter((r) => r.reason !== null);
    return {
      holding: rows.find((r) => r.reason === null)?.runs ?? 0,
      waiting: Object.fromEntries(waiting.map((r) => [r.reason, r.runs])),
      oldestWaitingSeconds: Math.max(0, ...waiting.map((r) => r.oldest_seconds)),
    };
  }

  async diagnose(tx: Tx, runId: string, tenantId: string): Promise<ClaimDiagnosisRecord | null> {
    const [row] = await this.sql.rows(DIAGNOSE_CLAIM, [runId, tenantId, CONCURRENT_POLICIES], tx);
    if (!row) return null;
    return {
      state: row.state as RunState,
      scheduleId: row.schedule_id as string,
      reason: row.reason as RunReason | null,
      reasonDetail: row.reason_detail as string | null,
      admitted: row.admitted as boolean,
      startDeadlinePassed: row.start_deadline_passed as boolean,
      notDue: row.not_due as boolean,
      dueAt: row.due_at as Date,
      scheduledAt: row.scheduled_at as Date,
      scheduleCancelled: row.schedule_cancelled as boolean,
      cancelRequested: row.cancel_requested as boolean,
      attemptsExhausted: row.attempts_exhausted as boolean,
      deadlinePassed: row.deadline_passed as boolean,
      tenantAtCapacity: row.tenant_at_capacity as boolean,
      overlapping: row.overlapping as boolean,
      overlapPolicy: row.overlap_policy as OverlapPolicy,
      priority: priorityOfRank(row.priority as number),
      rateWaitMs: Math.ceil(row.rate_wait_ms as number),
      targetGone: row.target_gone as boolean,
      targetDisabledReason: row.target_disabled_reason as string | null,
      targetBackoffMs: Math.ceil(row.target_backoff_ms as number),
      targetAtCapacity: row.target_at_capacity as boolean,
      dbNow: row.db_now as Date,
    };
  }

  /** True when the run was still waiting and is now ended. */
  async endWaiting(
    tx: Tx,
    run: ClaimRequest,
    state: 'CANCELLED' | 'FAILED' | 'SKIPPED',
    reason: RunReason,
    detail: string | null,
  ): Promise<boolean> {
    const params = [run.runId, run.tenantId, state, reason, detail];
    return (await this.sql.affected(END_WAITING_RUN, params, tx)) > 0;
  }

  /** The run waits with the reason and gives back its permit (see PARK_RUN). */
  async park(tx: Tx, run: ClaimRequest, reason: WaitReason): Promise<void> {
    await this.sql.affected(PARK_RUN, [run.runId, run.tenantId, reason], tx);
  }
}

/** The admitter's look at the waiting lists (see TENANTS_WAITING). */
export interface WaitingAtAGlance {
  /** Tenants with runs waiting for admission, in tenant-id order. */
  tenants: string[];
  /** Some waiting run is past its start deadline (SKIP_PAST_START_DEADLINE has work). */
  pastStartDeadline: boolean;
}

function toRunToPublish(r: {
  id: string;
  tenant_id: string;
  priority: number;
  scheduled_at: Date;
  target_id: string | null;
}): RunToPublish {
  return {
    runId: r.id,
    tenantId: r.tenant_id,
    scheduledAt: r.scheduled_at,
    priority: priorityOfRank(r.priority),
    ...(r.target_id ? { targetId: r.target_id } : {}),
  };
}

function toClaim(row: Row): Claim {
  return {
    runId: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    fencingToken: Number(row.fencing_token),
    attempt: row.attempt_count as number,
    leaseUntil: row.lease_until as Date,
    scheduledAt: row.scheduled_at as Date,
    targetId: row.target_id as string,
    payload: (row.payload ?? {}) as Record<string, unknown>,
    priority: priorityOfRank(row.priority as number),
    idempotencyKey: row.idempotency_key as string,
    startsLate: row.starts_late === true,
  };
}

/**
 * The parameters of both claim statements: $1 run ids .. $5 concurrent policies, $6..$7 the
 * runs' scheduled_at range.
 */
function claimParameters(runs: readonly ClaimRequest[], workerId: string, leaseMs: number) {
  return [
    runs.map((r) => r.runId),
    runs.map((r) => r.tenantId),
    workerId,
    leaseMs,
    CONCURRENT_POLICIES,
    ...runsRange(runs),
  ];
}

/** The runs' scheduled_at range, from their jobs (unbounded if one has none). */
function runsRange(runs: readonly ClaimRequest[]) {
  return instantBounds(runs.map((r) => instantOf(r.scheduledAt)));
}

/** A queue job's scheduledAt as an instant; unknown when absent or unreadable. */
function instantOf(iso: string | undefined): Date | undefined {
  if (!iso) return undefined;
  const at = new Date(iso);
  return Number.isNaN(at.getTime()) ? undefined : at;
}
