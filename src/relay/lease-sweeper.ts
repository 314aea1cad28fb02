import { Inject, Injectable } from '@nestjs/common';
import { PeriodicDuty } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { ExecutionService } from '../execution';

/**
 * Relay duty: reclaims RUNNING runs whose lease expired (their worker died, hung or lost the
 * database), so they are retried or shown UNKNOWN instead of RUNNING forever. Any number of
 * relays may sweep at once: each run is taken FOR UPDATE SKIP LOCKED and moved by a fenced
 * transition. A full batch sweeps again at once (a few rounds), else it waits out the interval.
 */
@Injectable()
export class LeaseSweeper extends PeriodicDuty {
  constructor(
    private readonly execution: ExecutionService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(LeaseSweeper.name, () => config.relay.sweepIntervalMs);
  }

  protected async round(): Promise<void> {
    for (let round = 0; round < 10 && this.isRunning(); round++) {
      const swept = await this.execution.sweepExpiredLeases();
      if (swept < this.config.relay.sweepBatchSize) return;
    }
  }
}
