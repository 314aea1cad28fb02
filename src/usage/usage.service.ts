import { Injectable } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { LoadProfileService } from '../load-profile';
import { ADMISSION_WAITS, type AdmissionWait } from '../run-vocabulary';
import { SchedulesService } from '../schedules';
import type { Tenant } from '../tenants';
import type { TenantUsage } from './usage';

/** How many of the busiest projected minutes a report lists. */
export const BUSIEST_MINUTES = 5;

/** Reads a tenant's usage from the records that keep it (each a bounded read, no scan). */
@Injectable()
export class UsageService {
  constructor(
    private readonly schedules: SchedulesService,
    private readonly admission: AdmissionService,
    private readonly load: LoadProfileService,
  ) {}

  async of(tenant: Tenant): Promise<TenantUsage> {
    const [activeSchedules, admission, window] = await Promise.all([
      this.schedules.liveCount(tenant.id),
      this.admission.tenantAdmission(tenant.id),
      this.load.window(tenant.id),
    ]);
    return {
      tenantId: tenant.id,
      quotas: { ...tenant.quotas },
      activeSchedules,
      runsHoldingPermits: admission.holding,
      waitingRuns: Object.fromEntries(
        ADMISSION_WAITS.map((reason) => [reason, admission.waiting[reason] ?? 0]),
      ) as Record<AdmissionWait, number>,
      oldestWaitingSeconds: admission.oldestWaitingSeconds,
      allowedRunsPerMinute: window.allowedPerMinute,
      busiestMinutes: window.busiest(BUSIEST_MINUTES),
    };
  }
}
