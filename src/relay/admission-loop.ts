import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { PeriodicDuty } from '../common';
import { AdmissionService } from '../admission';
import { APP_CONFIG, type AppConfig } from '../config';
import { AdmitterCadence } from './admitter-cadence';

/**
 * How long a decision that runs wait keeps the admitter at its active pace: longer than the
 * deciding transaction stays open after it. A crowded instant's batch decides up to a second
 * (CROWDED_WINDOW_MS) before its instant and commits at the instant, so one second was too
 * close; rounds at the active pace for a few seconds more cost little beside such a batch.
 */
const WAITING_DECIDED_HOLD_MS = 5000;

/**
 * The relay's admitter loop: every ADMISSION_INTERVAL_MS while runs wait (less often while none
 * does, see AdmitterCadence) it lets admission take, from each tenant's waiting list, what the
 * tenant can afford now. Any number of relays may run it: each tenant's round runs under the
 * tenant's permit lock and takes its runs SKIP LOCKED.
 */
@Injectable()
export class AdmissionLoop extends PeriodicDuty implements OnModuleDestroy {
  private readonly cadence: AdmitterCadence;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly admission: AdmissionService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    const cadence = new AdmitterCadence(
      config.admission.intervalMs,
      config.admission.idleIntervalMs,
      WAITING_DECIDED_HOLD_MS,
    );
    super(AdmissionLoop.name, () => cadence.pauseMs());
    this.cadence = cadence;
    this.unsubscribe = admission.onWaitingDecided(() => {
      if (cadence.waitingDecided()) this.wake();
    });
  }

  protected async round(): Promise<number> {
    const round = await this.admission.admitWaiting();
    this.cadence.roundEnded(round.tenantsWaiting);
    return round.admitted;
  }

  onModuleDestroy(): void {
    this.unsubscribe();
  }
}
