import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import { CONCURRENT_POLICIES, type OverlapPolicy } from '../overlap';
import type { RunReason, RunState, WaitReason } from '../run-vocabulary';
import type { Claim, ClaimRequest } from './claim';
import type { ClaimDiagnosis } from './claim-refusal';
import {
  CLAIM_RUNS,
  DIAGNOSE_CLAIM,
  END_WAITING_RUN,
  LOCK_TENANT_AND_SCHEDULE_OF_RUN,
  LOCK_TENANT_PERMITS,
  LOCK_TENANTS_PERMITS,
  NOTE_WAITING_REASON,
} from './admission.sql';

/** ClaimDiagnosis with what acting on the refusal needs. */
export interface ClaimDiagnosisRecord extends ClaimDiagnosis {
  scheduleId: string;
  reason: RunReason | null;
  reasonDetail: string | null;
  dueAt: Date;
  overlapPolicy: OverlapPolicy;
  dbNow: Date;
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

  /** What can be claimed of the runs, with attempts and rate tokens (see CLAIM_RUNS). */
  async claimMany(
    tx: Tx,
    runs: readonly ClaimRequest[],
    workerId: string,
    leaseMs: number,
  ): Promise<Claim[]> {
    const rows = await this.sql.rows(
      CLAIM_RUNS,
      [
        runs.map((r) => r.runId),
        runs.map((r) => r.tenantId),
        workerId,
        leaseMs,
        CONCURRENT_POLICIES,
      ],
      tx,
    );
    return rows.map(toClaim);
  }

  async diagnose(tx: Tx, runId: string, tenantId: string): Promise<ClaimDiagnosisRecord | null> {
    const [row] = await this.sql.rows(DIAGNOSE_CLAIM, [runId, tenantId, CONCURRENT_POLICIES], tx);
    if (!row) return null;
    return {
      state: row.state as RunState,
      scheduleId: row.schedule_id as string,
      reason: row.reason as RunReason | null,
      reasonDetail: row.reason_detail as string | null,
      notDue: row.not_due as boolean,
      dueAt: row.due_at as Date,
      scheduleCancelled: row.schedule_cancelled as boolean,
      cancelRequested: row.cancel_requested as boolean,
      attemptsExhausted: row.attempts_exhausted as boolean,
      deadlinePassed: row.deadline_passed as boolean,
      tenantAtCapacity: row.tenant_at_capacity as boolean,
      overlapping: row.overlapping as boolean,
      overlapPolicy: row.overlap_policy as OverlapPolicy,
      rateWaitMs: Math.ceil(row.rate_wait_ms as number),
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

  async noteWaiting(tx: Tx, run: ClaimRequest, reason: WaitReason): Promise<void> {
    await this.sql.affected(NOTE_WAITING_REASON, [run.runId, run.tenantId, reason], tx);
  }
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
  };
}
