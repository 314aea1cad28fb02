import { Inject, Injectable } from '@nestjs/common';
import { BackfillsService } from '../backfills';
import { APP_CONFIG, type AppConfig } from '../config';
import { RelayDuty } from './relay-duty';

/**
 * Relay duty: moves running backfills on, one step of each per round (the runs whose turn came,
 * within maxConcurrent and the overlap policy). Any number of relays may run it: each step holds
 * its backfill's row (SKIP LOCKED), and a backfilled run's identity makes a second insert of an
 * instant a no-op.
 */
@Injectable()
export class BackfillLoop extends RelayDuty {
  constructor(
    private readonly backfills: BackfillsService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(BackfillLoop.name, () => config.relay.backfillIntervalMs);
  }

  protected round(): Promise<unknown> {
    return this.backfills.advanceAll();
  }
}
