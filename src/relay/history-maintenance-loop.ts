import { PeriodicDuty } from '../common';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../config';
import { HistoryService, type MaintenanceResult } from '../history';

/**
 * Relay duty: keeps the run history's partitions (HISTORY_PARTITIONS_AHEAD created ahead, those
 * past the retention dropped) every HISTORY_MAINTENANCE_INTERVAL_MS, the first round at start.
 * Any number of relays may run it: every change is made under the maintenance advisory lock.
 */
@Injectable()
export class HistoryMaintenanceLoop extends PeriodicDuty {
  constructor(
    private readonly history: HistoryService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(HistoryMaintenanceLoop.name, () => config.history.maintenanceIntervalMs);
  }

  protected round(): Promise<MaintenanceResult> {
    return this.tick();
  }

  /** One round; public so tests can run it (and race it) without the timer. */
  tick(): Promise<MaintenanceResult> {
    return this.history.maintain();
  }
}
