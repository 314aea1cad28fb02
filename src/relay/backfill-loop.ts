import { PeriodicDuty } from '../common';
import { Inject, Injectable } from '@nestjs/common';
import { BackfillsService } from '../backfills';
import { APP_CONFIG, type AppConfig } from '../config';

/**
 * Relay duty: moves running backfills on, one step of each per round (the runs whose turn came,
 * within maxConcurrent and the overlap policy), and forgets a few of those that ended more than
 * RELAY_FINISHED_OPERATION_RETENTION_DAYS ago. Any number of relays may run it: each step holds
 * its backfill's row (SKIP LOCKED), and a backfilled run's identity makes a second insert of an
 * instant a no-op.
 */
@Injectable()
export class BackfillLoop extends PeriodicDuty {
  constructor(
    private readonly backfills: BackfillsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(BackfillLoop.name, () => config.relay.backfillIntervalMs);
  }

  protected async round(): Promise<unknown> {
    // A few ended backfills a round, each with its (bounded) planned instants.
    await this.backfills.pruneFinished(this.config.relay.finishedOperationRetentionDays, 10);
    return this.backfills.advanceAll();
  }
}
