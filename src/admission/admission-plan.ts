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

export interface AdmissionCandidate {
  tenantId: string;
  priority: RunPriority;
  scheduledAt: Date;
}

/** Admitted now, or waiting for the named part of the budget. */
export type AdmissionDecision = { admitted: true } | { admitted: false; waitsFor: AdmissionWait };

/**
 * Which of the new runs their tenants can afford now, in admission order (priority, then
 * instant): as many per tenant as it has free permits and tokens, none while runs of the tenant
 * already wait. Of those, `normal` and `low` runs also need room in the fleet; when there is not
 * enough for all, the room is shared by weight (shareFleet) and the rest wait `throttled_fleet`.
 * Pure; the caller holds the tenants' permit locks while it reads the budgets and writes the
 * decision. Decisions are in the order of `runs`.
 */
export function decideAdmission(
  runs: readonly AdmissionCandidate[],
  budgets: ReadonlyMap<string, TenantBudget>,
  fleet: FleetRoom = { free: null },
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
  for (const { run, i } of order) {
    const budget = budgetOf(budgets, run.tenantId);
    const nth = (taken.get(run.tenantId) ?? 0) + 1;
    if (!budget.waiting && nth <= Math.min(budget.permits, budget.tokens)) {
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
