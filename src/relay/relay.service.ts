import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PeriodicLoop } from '../common/loop/periodic-loop';
import { MetricsService } from '../observability/metrics.service';
import { errorSummary } from '../observability/error-summary';

/** The relay role's main loop; started after boot, drained before shutdown. */
@Injectable()
export class RelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RelayService.name);
  private readonly loop = new PeriodicLoop(
    () => this.tick(),
    () => 1000,
    (error) => this.logger.error({ err: errorSummary(error) }, 'relay tick failed'),
  );

  constructor(private readonly metrics: MetricsService) {}

  onApplicationBootstrap(): void {
    this.loop.start();
    this.metrics.roleActive.set({ role: 'relay' }, 1);
    this.logger.log('relay started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    this.metrics.roleActive.set({ role: 'relay' }, 0);
    this.logger.log('relay stopped');
  }

  isRunning(): boolean {
    return this.loop.isRunning();
  }

  private async tick(): Promise<void> {
    // Work arrives with the dispatch and execution issues.
  }
}
