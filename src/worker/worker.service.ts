import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { Lifecycle } from '../observability';
import { PgBossService, RUNS_QUEUE, type RunJob } from '../queue';
import { RunExecutor } from './run-executor';

/**
 * The worker role: consumes run jobs with bounded local concurrency. pg-boss completes a job
 * after its handler returns, i.e. once its run is claimed (or refused, and requeued if it must
 * wait): from the claim on the run's lease and the sweeper guarantee it an end, so the job has
 * done its work. A handler that throws (the database was unreachable at claim) has its jobs
 * retried by pg-boss.
 */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerService.name);
  private workId: string | null = null;
  private readonly wakeTimers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly queue: PgBossService,
    private readonly executor: RunExecutor,
    private readonly lifecycle: Lifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const worker = this.config.worker;
    this.workId = await this.queue.boss.work<RunJob>(
      RUNS_QUEUE,
      {
        // pg-boss sleeps a polling interval after every fetch unless the fetch came back full
        // (burstWhenBatchFull, which needs batchSize > 1): fetch batches, so a backlog drains
        // continuously instead of one job per loop per poll.
        batchSize: worker.batchSize,
        localConcurrency: worker.fetchLoops,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: worker.pollingIntervalMs / 1000,
        notifyPollingIntervalSeconds: worker.notifyPollingIntervalMs / 1000,
      },
      async (jobs) => {
        // The handler returns once the runs are claimed (the jobs are then acknowledged); the
        // attempts go on. It fetches again only when there is room for another batch.
        await this.executor.start(jobs, (inMs) => this.wakeIn(inMs));
        await this.executor.roomFor(Math.max(1, worker.concurrency - worker.batchSize + 1));
      },
    );
    this.lifecycle.emit({ kind: 'role.started', role: 'worker' });
    this.logger.log({ workerId: this.executor.workerId }, 'worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    const workId = this.workId;
    this.workId = null;
    for (const timer of this.wakeTimers) clearTimeout(timer);
    this.wakeTimers.clear();
    if (workId) {
      await this.queue.boss
        .offWork(RUNS_QUEUE, { id: workId, wait: true })
        .catch((error: unknown) =>
          this.logger.error({ err: errorSummary(error) }, 'worker stop failed'),
        );
    }
    // Attempts in flight end under their fence, not by lease expiry.
    await this.executor.drain();
    this.executor.close();
    this.lifecycle.emit({ kind: 'role.stopped', role: 'worker' });
    this.logger.log('worker stopped');
  }

  isRunning(): boolean {
    return this.workId !== null;
  }

  /**
   * A job published with a future startAfter (a retry, a throttled run) is only fetched at the
   * next poll; a local timer wakes a worker when it is due. Other replicas rely on their poll.
   */
  private wakeIn(ms: number): void {
    const timer = setTimeout(() => {
      this.wakeTimers.delete(timer);
      if (this.workId) this.queue.boss.notifyWorker(this.workId);
    }, ms + 5);
    timer.unref();
    this.wakeTimers.add(timer);
  }
}
