/** What the rest of the system knows about the caller's tenant. */
export interface TenantQuotas {
  maxActiveSchedules: number;
  dispatchRatePerSecond: number;
  maxConcurrentRuns: number;
  /** Share of the worker slots while the fleet is saturated, relative to other tenants'. */
  weight: number;
  /** Days its runs and attempts are kept as rows before only their daily summaries remain. */
  historyRetentionDays: number;
}

export interface Tenant {
  id: string;
  name: string;
  quotas: TenantQuotas;
  createdAt: Date;
  updatedAt: Date;
}

export const DEFAULT_QUOTAS: TenantQuotas = {
  maxActiveSchedules: 10_000,
  dispatchRatePerSecond: 100,
  maxConcurrentRuns: 50,
  weight: 1,
  historyRetentionDays: 7,
};

/** Bounds of historyRetentionDays (the database checks them too). */
export const HISTORY_RETENTION_DAYS = { min: 1, max: 400 } as const;
