import { priorityRank, type RunPriority, type WaitReason } from '../run-vocabulary';

/** A tenant's budget at the moment of admission, read under its permit lock. */
export interface TenantBudget {
  permits: number;
  tokens: number;
  /** Runs of the tenant already wait: new ones queue behind them. */
  waiting: boolean;
}

export interface AdmissionCandidate {
  tenantId: string;
  priority: RunPriority;
  scheduledAt: Date;
}

/** Admitted now, or waiting for the named part of the budget. */
export type AdmissionDecision = { admitted: true } | { admitted: false; waitsFor: WaitReason };

/**
 * Which of the new runs their tenants can afford now, in admission order (priority, then
 * instant): as many per tenant as it has free permits and tokens, none while runs of the tenant
 * already wait. Pure; the caller holds the tenants' permit locks while it reads the budgets and
 * writes the decision. Decisions are in the order of `runs`.
 */
export function decideAdmission(
  runs: readonly AdmissionCandidate[],
  budgets: ReadonlyMap<string, TenantBudget>,
): AdmissionDecision[] {
  const order = runs
    .map((run, i) => ({ run, i }))
    .sort(
      (a, b) =>
        priorityRank(a.run.priority) - priorityRank(b.run.priority) ||
        a.run.scheduledAt.getTime() - b.run.scheduledAt.getTime(),
    );
  const taken = new Map<string, number>();
  const decisions: AdmissionDecision[] = new Array(runs.length);
  for (const { run, i } of order) {
    const budget = budgets.get(run.tenantId) ?? { permits: 0, tokens: 0, waiting: false };
    const nth = (taken.get(run.tenantId) ?? 0) + 1;
    if (!budget.waiting && nth <= Math.min(budget.permits, budget.tokens)) {
      taken.set(run.tenantId, nth);
      decisions[i] = { admitted: true };
    } else {
      decisions[i] = {
        admitted: false,
        waitsFor: nth > budget.permits ? 'throttled_concurrency' : 'throttled_rate',
      };
    }
  }
  return decisions;
}
