import { once } from 'node:events';
import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { PgBoss } from 'pg-boss';
import { APP_CONFIG, type AppConfig } from '../config';
import { errorSummary } from '../common';
import {
  PreparingPrimaryClient,
  PrimaryLocator,
  primaryPoolOptions,
  primarySocket,
  urlFor,
} from '../database';
import { PGBOSS_SCHEMA, RUN_QUEUES } from './queue.constants';

/**
 * Owns this process's pg-boss instance: pg-boss on our Postgres is both the outbox and the
 * execution queue. Writes that must join a transaction go through RunJobsRepository.
 */
@Injectable()
export class PgBossService implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(PgBossService.name);
  readonly boss: PgBoss;
  private started = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PrimaryLocator) locator: PrimaryLocator,
  ) {
    // The credentials and parameters of the URL; the server is the locator's primary: its
    // pool's connections are PrimaryClients and its LISTEN client dials a primarySocket. Its
    // statements run prepared (PreparingPrimaryClient): the fetch, deletion and completion of
    // jobs are run for every batch of runs, and planning each cost more than running it.
    const toPrimary = {
      ...primaryPoolOptions(locator, config.database.connectTimeoutMs, config.database.poolIdleMs),
      Client: PreparingPrimaryClient,
      stream: primarySocket(locator),
    };
    this.boss = new PgBoss({
      connectionString: urlFor(locator.address, locator.address.hosts[0]),
      ...toPrimary,
      schema: PGBOSS_SCHEMA,
      application_name: 'dueline-queue',
      max: config.queue.poolSize,
      // pg-boss's own cron is not our engine; our relay repairs runs, so its supervisor is
      // only needed where jobs are executed or relayed.
      schedule: false,
      supervise: config.roles.has('relay') || config.roles.has('worker'),
      migrate: true,
      // Workers wake the moment a run job is created instead of waiting out a poll.
      useListenNotify: true,
      // Its retention sweep (deleteAfterSeconds below) runs once per this interval per queue;
      // pg-boss's default is daily, which lets a day of finished jobs pile up.
      maintenanceIntervalSeconds: Math.min(
        86_400,
        Math.max(60, config.queue.finishedJobRetentionSeconds),
      ),
    });
    this.boss.on('error', (error: unknown) =>
      this.logger.error({ err: errorSummary(error) }, 'pg-boss error'),
    );
  }

  async onModuleInit(): Promise<void> {
    await this.boss.start();
    // Idempotent: every replica declares the queues it may use. Retries belong to our ledger
    // (RETRY_WAIT under the fence); pg-boss's own retry only re-delivers a job a worker died
    // holding, which the claim then accepts or refuses.
    // A claimed run's job is deleted by the worker (RunJobsRepository.deleteClaimed); a job that
    // still finishes in pg-boss is kept QUEUE_FINISHED_JOB_RETENTION_SECONDS, not its 7 days.
    // updateQueue carries the setting to queues an older version created.
    const retention = { deleteAfterSeconds: this.config.queue.finishedJobRetentionSeconds };
    for (const queue of RUN_QUEUES) {
      await this.boss.createQueue(queue, {
        notify: true,
        retryLimit: this.config.queue.jobRetryLimit,
        retryDelay: 1,
        ...retention,
      });
      await this.boss.updateQueue(queue, retention);
    }
    this.started = true;
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    // stop() resolves before pg-boss has finished closing its pool; 'stopped' marks the end, and
    // only then may the database (perhaps our embedded one) go away.
    // Its graceful stop shares the process's shutdown bound with the roles' drains.
    const timeout = Math.max(1000, this.config.shutdownTimeoutMs);
    const stopped = once(this.boss, 'stopped');
    await this.boss.stop({ graceful: true, timeout, close: true });
    await Promise.race([stopped, new Promise((done) => setTimeout(done, timeout + 2000).unref())]);
  }

  isStarted(): boolean {
    return this.started;
  }
}
