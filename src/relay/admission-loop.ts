import { PeriodicDuty } from '../common';
import { Inject, Injectable } from '@nestjs/common';
import { AdmissionService } from '../admission';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * The relay's admitter loop: every ADMISSION_INTERVAL_MS it lets admission take, from each
 * tenant's waiting list, what the tenant can afford now. Any number of relays may run it: each
 * tenant's round runs under the tenant's permit lock and takes its runs SKIP LOCKED.
 */
@Injectable()
export class AdmissionLoop extends PeriodicDuty {
  constructor(
    private readonly admission: AdmissionService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(AdmissionLoop.name, () => config.admission.intervalMs);
  }

  protected round(): Promise<number> {
    return this.admission.admitWaiting();
  }
}
