import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { AdmissionService } from '../admission';
import { errorSummary, PeriodicLoop } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * The relay's admitter loop: every ADMISSION_INTERVAL_MS it lets admission take, from each
 * tenant's waiting list, what the tenant can afford now. Any number of relays may run it: each
 * tenant's round runs under the tenant's permit lock and takes its runs SKIP LOCKED.
 */
@Injectable()
export class AdmissionLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(AdmissionLoop.name);
  private readonly loop = new PeriodicLoop(
    async () => {
      await this.admission.admitWaiting();
    },
    () => this.config.admission.intervalMs,
    (error) => this.logger.error({ err: errorSummary(error) }, 'admission round failed'),
  );

  constructor(
    private readonly admission: AdmissionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
