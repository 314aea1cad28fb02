import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { BackfillsService } from '../backfills';
import { errorSummary, PeriodicLoop } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * Relay duty: moves running backfills on, one step of each per round (the runs whose turn came,
 * within maxConcurrent and the overlap policy). Any number of relays may run it: each step holds
 * its backfill's row (SKIP LOCKED), and a backfilled run's identity makes a second insert of an
 * instant a no-op.
 */
@Injectable()
export class BackfillLoop implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(BackfillLoop.name);
  private readonly loop = new PeriodicLoop(
    () => this.backfills.advanceAll().then(() => undefined),
    () => this.config.relay.backfillIntervalMs,
    (error) => this.logger.error({ err: errorSummary(error) }, 'backfill round failed'),
  );

  constructor(
    private readonly backfills: BackfillsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
