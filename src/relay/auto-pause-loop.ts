import { Inject, Injectable } from '@nestjs/common';
import { Clock, PeriodicDuty } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { SchedulesService } from '../schedules';

/**
 * Look back this far beyond the last round: a failure's finished_at is its transaction's clock,
 * and that transaction may commit after a round that started later has looked.
 */
const LOOK_BACK_MS = 60_000;
/** A replica that just started looks this far back (the rounds of a stopped one are not lost). */
const FIRST_LOOK_BACK_MS = 3_600_000;

/**
 * Relay duty: pauses schedules after pauseAfterConsecutiveFailures consecutive FAILED or
 * UNKNOWN runs. Any number of relays may run it: the pause is an edit that re-checks the streak
 * under the schedule's lock, so a schedule is paused once (SchedulesService.autoPauseFailing).
 */
@Injectable()
export class AutoPauseLoop extends PeriodicDuty {
  private lastRoundAt: number | null = null;

  constructor(
    private readonly schedules: SchedulesService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    super(AutoPauseLoop.name, () => config.relay.autoPauseIntervalMs);
  }

  protected round(): Promise<number> {
    return this.tick();
  }

  /** One round; public so tests can run it (and race it) without the timer. */
  async tick(): Promise<number> {
    const startedAt = this.clock.nowMs();
    const since =
      this.lastRoundAt === null ? startedAt - FIRST_LOOK_BACK_MS : this.lastRoundAt - LOOK_BACK_MS;
    const paused = await this.schedules.autoPauseFailing(new Date(since));
    this.lastRoundAt = startedAt;
    return paused.length;
  }
}
