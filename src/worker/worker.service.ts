import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { PeriodicLoop } from '../common/loop/periodic-loop';
import { MetricsService } from '../observability/metrics.service';
import { errorSummary } from '../observability/error-summary';

/** The worker role's main loop; started after boot, drained before shutdown. */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerService.name);
  private readonly loop = new PeriodicLoop(
    () => this.tick(),
    () => 1000,
    (error) => this.logger.error({ err: errorSummary(error) }, 'worker tick failed'),
  );

  constructor(private readonly metrics: MetricsService) {}

  onApplicationBootstrap(): void {
    this.loop.start();
    this.metrics.roleActive.set({ role: 'worker' }, 1);
    this.logger.log('worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
    this.metrics.roleActive.set({ role: 'worker' }, 0);
    this.logger.log('worker stopped');
  }

  isRunning(): boolean {
    return this.loop.isRunning();
  }

  private async tick(): Promise<void> {
    // Work arrives with the dispatch and execution issues.
  }
}
