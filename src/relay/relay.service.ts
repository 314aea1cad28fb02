import { Inject, Injectable, Logger } from '@nestjs/common';
import { BulkOperationsService } from '../bulk-operations';
import { PeriodicDuty } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { Lifecycle } from '../observability';
import { RunJobsRepository } from '../queue';
import { SchedulesService } from '../schedules';
import { SigningKeysService } from '../signing-keys';
import { TargetsService } from '../targets';
import { OutboxRepository } from './outbox.repository';

/**
 * The relay role's housekeeping: republishes QUEUED runs whose queue job is gone (the outbox
 * repair; harmless if the job was merely slow, because workers claim the run, not the
 * message), reports the outbox age, prunes expired Idempotency-Keys and drops signing secrets
 * whose rotation overlap has ended, and rotates the JWT signing keys when due. Expired leases are
 * the LeaseSweeper's; admission is the admission module's, at claim.
 */
@Injectable()
export class RelayService extends PeriodicDuty {
  private readonly logger = new Logger(RelayService.name);

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly jobs: RunJobsRepository,
    private readonly schedules: SchedulesService,
    private readonly bulkOperations: BulkOperationsService,
    private readonly targets: TargetsService,
    private readonly signingKeys: SigningKeysService,
    private readonly lifecycle: Lifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(RelayService.name, () => config.relay.intervalMs);
  }

  override onApplicationBootstrap(): void {
    super.onApplicationBootstrap();
    this.lifecycle.emit({ kind: 'role.started', role: 'relay' });
    this.logger.log('relay started');
  }

  override async beforeApplicationShutdown(): Promise<void> {
    await super.beforeApplicationShutdown();
    this.lifecycle.emit({ kind: 'role.stopped', role: 'relay' });
    this.logger.log('relay stopped');
  }

  override isRunning(): boolean {
    return super.isRunning();
  }

  protected round(): Promise<void> {
    return this.tick();
  }

  /** One round of housekeeping; public so tests can run it without waiting for the timer. */
  async tick(): Promise<void> {
    const { relay } = this.config;
    const repaired = await this.outbox.transaction(async (tx) => {
      const orphans = await this.outbox.lockOrphans(tx, {
        minAgeSeconds: relay.orphanMinAgeSeconds,
        limit: relay.repairBatchSize,
        staleActiveSeconds: relay.staleActiveJobSeconds,
      });
      await this.jobs.publish(tx, orphans);
      return orphans.length;
    });
    if (repaired > 0) this.lifecycle.emit({ kind: 'outbox.repaired', republished: repaired });
    this.lifecycle.emit({
      kind: 'outbox.age',
      seconds: await this.outbox.oldestQueuedAgeSeconds(),
    });
    await this.schedules.pruneIdempotencyKeys(relay.idempotencyPruneBatchSize);
    // At most a few per round: each drains its whole (bounded) selection.
    for (let i = 0; i < 3 && (await this.bulkOperations.resumeStalled()); i++);
    // A few finished operations a round: each takes up to MAX_BULK_RUNS items with it.
    await this.bulkOperations.pruneFinished(relay.finishedOperationRetentionDays, 10);
    await this.targets.dropExpiredSecrets(relay.idempotencyPruneBatchSize);
    await this.signingKeys.rotateIfDue();
  }
}
