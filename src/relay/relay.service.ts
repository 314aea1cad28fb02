import {
  BeforeApplicationShutdown,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { PeriodicLoop } from '../common/loop/periodic-loop';
import { OccurrenceLedger } from '../occurrences/occurrence-ledger';
import { errorSummary } from '../observability/error-summary';
import { MetricsService } from '../observability/metrics.service';
import { SchedulesService } from '../schedules/schedules.service';

/** A QUEUED run's job is only presumed lost once the run is this old. */
const ORPHAN_MIN_AGE_SECONDS = 30;
const REPAIR_BATCH = 200;
/** A job `active` this long while its run is still QUEUED was fetched by a worker that died. */
const STALE_ACTIVE_JOB_SECONDS = 60;
const PRUNE_BATCH = 1000;

/**
 * The relay role's housekeeping: republishes QUEUED runs whose queue job is gone (the outbox
 * repair; harmless if the job was merely slow, because workers claim the run, not the
 * message), reports the outbox age, and prunes expired Idempotency-Keys. Expired leases are
 * the LeaseSweeper's. Admission itself happens at claim time, in the database.
 */
@Injectable()
export class RelayService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(RelayService.name);
  private readonly loop = new PeriodicLoop(
    () => this.tick(),
    () => 5000,
    (error) => this.logger.error({ err: errorSummary(error) }, 'relay tick failed'),
  );
  private readonly republished;
  private readonly outboxAge;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly ledger: OccurrenceLedger,
    private readonly schedules: SchedulesService,
    private readonly metrics: MetricsService,
  ) {
    this.republished = metrics.counter(
      'dueline_runs_republished_total',
      'QUEUED runs whose queue job was gone and was published again',
    );
    this.outboxAge = metrics.gauge(
      'dueline_outbox_age_seconds',
      'Age of the oldest run that is ready to start but has not started',
    );
  }

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

  /** One round of housekeeping; public so tests can run it without waiting for the timer. */
  async tick(): Promise<void> {
    const repaired = await this.dataSource.transaction((em) =>
      this.ledger.repairOrphans(em, ORPHAN_MIN_AGE_SECONDS, REPAIR_BATCH, STALE_ACTIVE_JOB_SECONDS),
    );
    if (repaired > 0) {
      this.republished.inc(repaired);
      this.logger.warn({ repaired }, 'republished QUEUED runs that had no queue job');
    }
    this.outboxAge.set(await this.ledger.oldestQueuedAgeSeconds(this.dataSource.manager));
    await this.schedules.pruneIdempotencyKeys(PRUNE_BATCH);
  }
}
