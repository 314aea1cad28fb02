import type { AdmissionWait } from '../run-vocabulary';
import type { TenantQuotas } from '../tenants';

/** One minute of the tenant's projected load. */
export interface ProjectedMinute {
  minute: Date;
  runs: number;
}

/**
 * A tenant's use of its quotas now: what its own view (GET /usage) and the admin's
 * (GET /tenants/{id}/usage) show, so that a per-tenant breakdown never needs a metric label per
 * tenant.
 */
export interface TenantUsage {
  tenantId: string;
  quotas: TenantQuotas;
  /** Schedules counting against maxActiveSchedules (active and paused). */
  activeSchedules: number;
  /** Runs holding a permit of maxConcurrentRuns (RUNNING, admitted QUEUED). */
  runsHoldingPermits: number;
  waitingRuns: Record<AdmissionWait, number>;
  oldestWaitingSeconds: number;
  /** Runs a minute the tenant's dispatchRatePerSecond allows. */
  allowedRunsPerMinute: number;
  /** The busiest minutes of the next 24 hours, projected from its schedules. */
  busiestMinutes: ProjectedMinute[];
}
