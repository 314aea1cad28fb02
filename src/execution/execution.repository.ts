import { Injectable } from '@nestjs/common';
import { instantBounds, SqlRunner, type Row, type Tx } from '../database';
import type { OverlapPolicy } from '../overlap';
import { priorityOfRank, type RunPriority, type RunState } from '../run-vocabulary';
import type { HeartbeatResult, RunFence } from './execution';
import {
  FINISH_UNDER_FENCE,
  HEARTBEAT,
  LOCK_EXPIRED_LEASES,
  LOCK_HELD_RUNS,
  LOCK_SCHEDULES_OF_RUNS,
  TENANTS_WITH_EXPIRED_LEASES,
  TRANSITION_UNDER_FENCE,
} from './execution.sql';
import type { BackoffPolicy } from './retry-backoff';
import type { HeldRun, Transition } from './run-transition';

/** A run whose attempt ends under its fence: what the rest of its completion needs. */
export interface EndedRunRecord extends RunFence {
  scheduleId: string;
  /** Read with the run: every later statement about it prunes to its partition. */
  scheduledAt: Date;
  /** The attempt that ended (= attempt_count). */
  attempt: number;
  /** The target the run was created for (its flow control's). */
  targetId: string | null;
  overlapPolicy: OverlapPolicy;
  /** Its tenant had an event subscription when the run was read: its end may be an event. */
  subscribed: boolean;
}

/** A RUNNING run read under its fence, with what deciding its transition needs. */
export interface HeldRunRecord extends HeldRun, EndedRunRecord {
  retryPolicy: BackoffPolicy;
}

/** A transition decided from its report alone, for the run a fence names. */
export interface Finish {
  fence: RunFence;
  transition: Transition;
}

export interface ExpiredLeaseRecord extends HeldRunRecord {
  deduplicates: boolean;
}

@Injectable()
export class ExecutionRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  async heartbeat(fence: RunFence, leaseMs: number): Promise<HeartbeatResult> {
    const [row] = await this.sql.rows(HEARTBEAT, [
      fence.runId,
      fence.tenantId,
      fence.fencingToken,
      leaseMs,
      ...instantBounds([fence.scheduledAt]),
    ]);
    if (!row) return { held: false };
    return {
      held: true,
      leaseUntil: row.lease_until as Date,
      cancelRequested: row.cancel_requested as boolean,
    };
  }

  /** The schedule locks of a batch of completions (see LOCK_SCHEDULES_OF_RUNS). */
  private async lockSchedulesOfRuns(tx: Tx, fences: readonly RunFence[]): Promise<void> {
    await this.sql.rows(
      LOCK_SCHEDULES_OF_RUNS,
      [fences.map((f) => f.runId), ...instantBounds(fences.map((f) => f.scheduledAt))],
      tx,
    );
  }

  /**
   * A batch of completions behind their schedules' locks (LOCK_SCHEDULES_OF_RUNS): the runs
   * whose reports decide their end are finished at once (FINISH_UNDER_FENCE), the others are
   * read and locked under their fences for the caller to decide (LOCK_HELD_RUNS). Written
   * together without waiting for the locks' answer: the server reads each statement only after
   * answering the one before, so both still take their snapshots once the locks are granted.
   * One wait for all three (another when a run changed while its lock was awaited: see
   * finish). A fence missing from both results no longer holds.
   */
  async settleBehindScheduleLocks(
    tx: Tx,
    finishing: readonly Finish[],
    deciding: readonly RunFence[],
  ): Promise<{ finished: EndedRunRecord[]; held: HeldRunRecord[] }> {
    const [, finished, held] = await Promise.all([
      this.lockSchedulesOfRuns(tx, [...finishing.map((f) => f.fence), ...deciding]),
      finishing.length > 0
        ? this.finish(
            tx,
            inRunOrder(finishing, (f) => f.fence),
          )
        : [],
      deciding.length > 0
        ? this.lockHeld(
            tx,
            inRunOrder(deciding, (f) => f),
          )
        : [],
    ]);
    return { finished, held };
  }

  /**
   * The transitions decided from reports alone, under their fences (see FINISH_UNDER_FENCE).
   * A run the statement locked under its fence but could not write (changed after it began) is
   * written by a statement of its own, which sees that change; it is locked, so it cannot miss.
   */
  private async finish(tx: Tx, finishing: readonly Finish[]): Promise<EndedRunRecord[]> {
    const runs = await this.finishOnce(tx, finishing);
    const unwritten = runs.filter((r) => !r.finished).map((r) => r.run);
    if (unwritten.length > 0) {
      const transitions = new Map(finishing.map((f) => [f.fence.runId, f.transition]));
      const written = await this.transition(
        tx,
        unwritten.map((run) => ({
          fence: run,
          transition: transitions.get(run.runId) as Transition,
        })),
      );
      for (const run of unwritten) {
        if (!written.has(run.runId))
          throw new Error(`run ${run.runId} left its fence while locked`);
      }
    }
    return runs.map((r) => r.run);
  }

  private async finishOnce(
    tx: Tx,
    finishing: readonly Finish[],
  ): Promise<Array<{ run: EndedRunRecord; finished: boolean }>> {
    const rows = await this.sql.rows(
      FINISH_UNDER_FENCE,
      [
        finishing.map((f) => f.fence.runId),
        finishing.map((f) => f.fence.tenantId),
        finishing.map((f) => f.fence.fencingToken),
        finishing.map((f) => f.transition.state),
        finishing.map((f) => f.transition.reason),
        finishing.map((f) => f.transition.detail),
        ...instantBounds(finishing.map((f) => f.fence.scheduledAt)),
      ],
      tx,
    );
    return rows.map((row) => ({ run: toEndedRun(row), finished: row.finished as boolean }));
  }

  /** The runs still held under the given fences, locked (see LOCK_HELD_RUNS). */
  private async lockHeld(tx: Tx, fences: readonly RunFence[]): Promise<HeldRunRecord[]> {
    const rows = await this.sql.rows(
      LOCK_HELD_RUNS,
      [
        fences.map((f) => f.runId),
        fences.map((f) => f.tenantId),
        fences.map((f) => f.fencingToken),
        ...instantBounds(fences.map((f) => f.scheduledAt)),
      ],
      tx,
    );
    return rows.map(toHeldRun);
  }

  async tenantsWithExpiredLeases(limit: number): Promise<string[]> {
    const rows = await this.sql.rows(TENANTS_WITH_EXPIRED_LEASES, [limit]);
    return rows.map((row) => row.tenant_id as string);
  }

  async lockExpiredLeases(tx: Tx, tenantId: string, limit: number): Promise<ExpiredLeaseRecord[]> {
    const rows = await this.sql.rows(LOCK_EXPIRED_LEASES, [tenantId, limit], tx);
    return rows.map((row) => ({ ...toHeldRun(row), deduplicates: row.deduplicates as boolean }));
  }

  /**
   * The fenced transitions, by run id; a run missing from the result left its fence (nothing
   * was written for it).
   */
  async transition(
    tx: Tx,
    transitions: ReadonlyArray<{ fence: Required<RunFence>; transition: Transition }>,
  ): Promise<
    Map<
      string,
      { state: RunState; nextAttemptAt: Date | null; priority: RunPriority; scheduledAt: Date }
    >
  > {
    const rows = await this.sql.rows(
      TRANSITION_UNDER_FENCE,
      [
        transitions.map((t) => t.fence.runId),
        transitions.map((t) => t.fence.fencingToken),
        transitions.map((t) => t.transition.state),
        transitions.map((t) => t.transition.reason),
        transitions.map((t) => t.transition.detail),
        transitions.map((t) => t.transition.retryDelayMs),
        ...instantBounds(transitions.map((t) => t.fence.scheduledAt)),
      ],
      tx,
    );
    return new Map(
      rows.map((row) => [
        row.id as string,
        {
          state: row.state as RunState,
          nextAttemptAt: row.next_attempt_at as Date | null,
          priority: priorityOfRank(row.priority as number),
          scheduledAt: row.scheduled_at as Date,
        },
      ]),
    );
  }
}

/** Runs in id order: the order their probes lock them in, the same in every batch. */
function inRunOrder<T>(items: readonly T[], fence: (item: T) => RunFence): T[] {
  return [...items].sort((a, b) => (fence(a).runId < fence(b).runId ? -1 : 1));
}

function toEndedRun(row: Row): EndedRunRecord {
  return {
    runId: row.id as string,
    tenantId: row.tenant_id as string,
    scheduleId: row.schedule_id as string,
    scheduledAt: row.scheduled_at as Date,
    targetId: row.target_id as string | null,
    fencingToken: Number(row.fencing_token),
    attempt: row.attempt_count as number,
    overlapPolicy: row.overlap_policy as OverlapPolicy,
    subscribed: row.subscribed as boolean,
  };
}

function toHeldRun(row: Row): HeldRunRecord {
  return {
    ...toEndedRun(row),
    maxAttempts: row.max_attempts as number,
    retryDeadline: row.retry_deadline as Date,
    cancelRequested: row.cancel_requested as boolean,
    retryPolicy: {
      initialDelayMs: row.retry_initial_delay_ms as number,
      maxDelayMs: row.retry_max_delay_ms as number,
    },
    dbNow: row.db_now as Date,
  };
}
