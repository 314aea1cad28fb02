import { priorityRank, type AdmissionWait, type RunPriority } from '../run-vocabulary';
import { shareFleet } from './fleet-share';

/** A tenant's budget at the moment of admission, read under its permit lock. */
export interface TenantBudget {
  permits: number;
  tokens: number;
  /** Runs of the tenant already wait: new ones queue behind them. */
  waiting: boolean;
  /** Its share of a saturated fleet, relative to other tenants'. */
  weight: number;
  /** Permits it holds (RUNNING and admitted QUEUED runs): its present use of the fleet. */
  holding: number;
}

/**
 * Room in the fleet for `normal` and `low` runs: how many more may be admitted before the queue
 * holds `fleetBacklog` of them waiting for a worker. Null: unbounded. `high` runs never wait for
 * it (their slots are reserved at the workers).
 */
export interface FleetRoom {
  free: number | null;
}

/**
 * The budget of a target that limits its runs (maxConcurrency, ratePerSecond), backs off or is
 * disabled, read under its tenant's permit lock. A target with none of those has no budget.
 */
export interface TargetBudget {
  targetId: string;
  /** How many more of its runs may be admitted now (free permits and whole tokens). */
  room: number;
  /** Disabled: its runs end FAILED target_gone. */
  gone: boolean;
  /** Its Retry-After has not passed: its runs wait target_backoff. */
  backingOff: boolean;
  /** Runs of the target wait already: new ones queue behind them. */
  waiting: boolean;
}

export interface AdmissionCandidate {
  tenantId: string;
  priority: RunPriority;
  scheduledAt: Date;
  /** Its schedule, whose target may hold it back (see TargetBudget). */
  scheduleId?: string;
}

/** Admitted now, waiting for the named part of the budget, or ended (its target is gone). */
export type AdmissionDecision =
  | { admitted: true }
  | { admitted: false; waitsFor: AdmissionWait }
  | { admitted: false; ends: 'target_gone' };

/**
 * Which of the new runs their tenants can afford now, in admission order (priority, then
 * instant): as many per tenant as it has free permits and tokens, none while runs of the tenant
 * already wait. Of those, `normal` and `low` runs also need room in the fleet; when there is not
 * enough for all, the room is shared by weight (shareFleet) and the rest wait `throttled_fleet`.
 * A run its tenant can afford is then held to its target's budget (by schedule in `targets`):
 * it ends `target_gone` if the target is disabled, waits `target_backoff` while the target
 * backs off, and `throttled_target` beyond the target's room or while runs of the target wait.
 * Pure; the caller holds the tenants' permit locks (which cover their targets) while it reads
 * the budgets and writes the decision. Decisions are in the order of `runs`.
 */
export function decideAdmission(
  runs: readonly AdmissionCandidate[],
  budgets: ReadonlyMap<string, TenantBudget>,
  fleet: FleetRoom = { free: null },
  targets: ReadonlyMap<string, TargetBudget> = new Map(),
): AdmissionDecision[] {
  const order = runs
    .map((run, i) => ({ run, i }))
    .sort(
      (a, b) =>
        priorityRank(a.run.priority) - priorityRank(b.run.priority) ||
        a.run.scheduledAt.getTime() - b.run.scheduledAt.getTime(),
    );
  const taken = new Map<string, number>();
  const affordable: Array<{ run: AdmissionCandidate; i: number }> = [];
  const decisions: AdmissionDecision[] = new Array(runs.length);
  const takenOfTarget = new Map<string, number>();
  for (const { run, i } of order) {
    const budget = budgetOf(budgets, run.tenantId);
    const target = run.scheduleId === undefined ? undefined : targets.get(run.scheduleId);
    if (target?.gone) {
      decisions[i] = { admitted: false, ends: 'target_gone' };
      continue;
    }
    const nth = (taken.get(run.tenantId) ?? 0) + 1;
    if (!budget.waiting && nth <= Math.min(budget.permits, budget.tokens)) {
      if (target) {
        const nthOfTarget = (takenOfTarget.get(target.targetId) ?? 0) + 1;
        if (target.backingOff || target.waiting || nthOfTarget > target.room) {
          decisions[i] = {
            admitted: false,
            waitsFor: target.backingOff ? 'target_backoff' : 'throttled_target',
          };
          continue;
        }
        takenOfTarget.set(target.targetId, nthOfTarget);
      }
      taken.set(run.tenantId, nth);
      affordable.push({ run, i });
    } else {
      decisions[i] = {
        admitted: false,
        waitsFor: nth > budget.permits ? 'throttled_concurrency' : 'throttled_rate',
      };
    }
  }
  const needRoom = affordable.filter(({ run }) => run.priority !== 'high');
  const room = fleetShares(needRoom, budgets, fleet);
  for (const { run, i } of affordable) {
    if (run.priority === 'high' || room === null) {
      decisions[i] = { admitted: true };
      continue;
    }
    const left = room.get(run.tenantId) ?? 0;
    room.set(run.tenantId, left - 1);
    decisions[i] = left > 0 ? { admitted: true } : { admitted: false, waitsFor: 'throttled_fleet' };
  }
  return decisions;
}

/** Each tenant's share of the fleet's room, or null when everything fits. */
function fleetShares(
  runs: ReadonlyArray<{ run: AdmissionCandidate }>,
  budgets: ReadonlyMap<string, TenantBudget>,
  fleet: FleetRoom,
): Map<string, number> | null {
  if (fleet.free === null || runs.length <= fleet.free) return null;
  const wants = new Map<string, number>();
  for (const { run } of runs) wants.set(run.tenantId, (wants.get(run.tenantId) ?? 0) + 1);
  return shareFleet(
    [...wants].map(([tenantId, n]) => {
      const budget = budgetOf(budgets, tenantId);
      return { tenantId, weight: budget.weight, holding: budget.holding, wants: n };
    }),
    fleet.free,
  );
}

function budgetOf(budgets: ReadonlyMap<string, TenantBudget>, tenantId: string): TenantBudget {
  return budgets.get(tenantId) ?? { permits: 0, tokens: 0, waiting: false, weight: 1, holding: 0 };
}
