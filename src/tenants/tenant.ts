/** What the rest of the system knows about the caller's tenant. */
export interface TenantQuotas {
  maxActiveSchedules: number;
  dispatchRatePerSecond: number;
  maxConcurrentRuns: number;
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
};
