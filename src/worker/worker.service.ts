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
import {
  HIGH_RUNS_QUEUE,
  PgBossService,
  RUNS_QUEUE,
  RunJobsRepository,
  runsOf,
  type RunJob,
  type RunsJob,
} from '../queue';
import { RunExecutor, type WorkerLane } from './run-executor';

/**
 * The worker role: consumes run jobs (each a batch of runs) with bounded local concurrency. A
 * job has done its work once its runs are claimed (or refused, and requeued if they must wait):
 * from the claim on a run's lease and the sweeper guarantee it an end. A handler that throws
 * (the database was unreachable at claim) has its jobs retried by pg-boss; their runs claimed
 * meanwhile are refused then, as any run's second job is.
 */
@Injectable()
export class WorkerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(WorkerService.name);
  private readonly workIds: Array<{ queue: string; id: string }> = [];
  private readonly wakeTimers = new Set<NodeJS.Timeout>();
  /** Told to stop: a fetched job's runs not yet claimed go back to the queue. */
  private stopping = false;

  constructor(
    private readonly queue: PgBossService,
    private readonly jobs: RunJobsRepository,
    private readonly executor: RunExecutor,
    private readonly lifecycle: Lifecycle,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { concurrency, batchSize, reservedHighSharePercent } = this.config.worker;
    // `high` runs may take every slot; the others never the reserved share, so a fleet saturated
    // by normal and low runs still has slots free the moment a high run is admitted.
    const reserved = Math.floor((concurrency * reservedHighSharePercent) / 100);
    const otherSlots = concurrency - reserved;
    // A high batch fits the reserved slots, so it is fetched while the other lane is full.
    const highBatch = Math.min(batchSize, reserved > 0 ? reserved : concurrency);
    const otherBatch = Math.min(batchSize, otherSlots);
    this.workIds.push(
      await this.consume(HIGH_RUNS_QUEUE, 'high', highBatch, () =>
        this.executor.roomFor(Math.max(1, concurrency - highBatch + 1)),
      ),
      await this.consume(RUNS_QUEUE, 'other', otherBatch, async () => {
        await this.executor.roomFor(Math.max(1, otherSlots - otherBatch + 1), 'other');
        await this.executor.roomFor(Math.max(1, concurrency - otherBatch + 1));
      }),
    );
    this.lifecycle.emit({ kind: 'role.started', role: 'worker' });
    this.logger.log({ workerId: this.executor.workerId, reserved }, 'worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    const workIds = this.workIds.splice(0);
    for (const timer of this.wakeTimers) clearTimeout(timer);
    this.wakeTimers.clear();
    await Promise.all(
      workIds.map(({ queue, id }) =>
        this.queue.boss
          .offWork(queue, { id, wait: true })
          .catch((error: unknown) =>
            this.logger.error({ err: errorSummary(error) }, 'worker stop failed'),
          ),
      ),
    );
    // Attempts in flight end under their fence, not by lease expiry.
    await this.executor.drain();
    this.executor.close();
    this.lifecycle.emit({ kind: 'role.stopped', role: 'worker' });
    this.logger.log('worker stopped');
  }

  /** The id this worker's claims and attempts carry (host, process id and a random part). */
  get workerId(): string {
    return this.executor.workerId;
  }

  isRunning(): boolean {
    return this.workIds.length > 0;
  }

  /**
   * One fetch loop on `queue`, claiming `batchSize` runs at a time: a fetch takes four times as
   * many jobs as that many runs fill when each carries QUEUE_RUNS_PER_JOB. pg-boss sleeps a
   * polling interval after every fetch unless the fetch came back full (burstWhenBatchFull):
   * fetch batches, so a backlog drains continuously instead of one job per loop per poll. The
   * handler returns once the runs are claimed (the jobs are then deleted); the attempts go on.
   * It fetches again only when `room` says there is room for another batch.
   */
  private async consume(
    queue: string,
    lane: WorkerLane,
    batchSize: number,
    room: () => Promise<void>,
  ): Promise<{ queue: string; id: string }> {
    const worker = this.config.worker;
    // Jobs carry up to runsPerJob runs but often fewer (what one admission round or dispatch
    // could afford): four times as many jobs as full ones would need, so a fetch still fills the
    // batch, and what exceeds it waits below for room. At least two: pg-boss fetches again at
    // once after a full fetch only when a fetch takes more than one job (burstWhenBatchFull).
    const jobsPerFetch = Math.max(
      2,
      Math.min(batchSize, 4 * Math.ceil(batchSize / this.config.queue.runsPerJob)),
    );
    const id = await this.queue.boss.work<RunsJob | RunJob>(
      queue,
      {
        batchSize: jobsPerFetch,
        localConcurrency: worker.fetchLoops,
        burstWhenBatchFull: true,
        pollingIntervalSeconds: worker.pollingIntervalMs / 1000,
        notifyPollingIntervalSeconds: worker.notifyPollingIntervalMs / 1000,
      },
      async (jobs) => {
        const runs = jobs.flatMap((job) => runsOf(job.data));
        // Jobs may carry more runs than this worker takes at once (a publisher's
        // QUEUE_RUNS_PER_JOB above WORKER_BATCH_SIZE, or a worker of a few slots): the rest
        // wait for room here, their job held, so the slots are never oversubscribed.
        for (let from = 0; from < runs.length; from += batchSize) {
          if (from > 0) {
            await room();
            // Stopping: the rest go back to the queue (a retried job; what this worker claimed
            // of it is refused then, as a run's second job is).
            if (this.stopping) throw new WorkerStopping(runs.length - from);
          }
          await this.executor.start(
            runs.slice(from, from + batchSize),
            (inMs) => this.wakeIn(inMs),
            lane,
          );
        }
        // Claimed: the jobs have done their work. A failed delete leaves them to pg-boss's
        // completion and its retention (QUEUE_FINISHED_JOB_RETENTION_SECONDS).
        await this.jobs
          .deleteClaimed(queue, jobs)
          .catch((error: unknown) =>
            this.logger.warn({ err: errorSummary(error) }, 'run jobs not deleted'),
          );
        await room();
      },
    );
    return { queue, id };
  }

  /**
   * A job published with a future startAfter (a retry, a throttled run) is only fetched at the
   * next poll; a local timer wakes a worker when it is due. Other replicas rely on their poll.
   */
  private wakeIn(ms: number): void {
    const timer = setTimeout(() => {
      this.wakeTimers.delete(timer);
      for (const { id } of this.workIds) this.queue.boss.notifyWorker(id);
    }, ms + 5);
    timer.unref();
    this.wakeTimers.add(timer);
  }
}

/** A fetched job's runs this worker did not claim before it was told to stop. */
class WorkerStopping extends Error {
  constructor(unclaimed: number) {
    super(`worker stopping: ${unclaimed} run(s) of a fetched job left to the queue`);
  }
}
