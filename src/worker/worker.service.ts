import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { Batcher, errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { RunHandoff, type HandoffRoom } from '../handoff';
import { Lifecycle } from '../observability';
import {
  HIGH_RUNS_QUEUE,
  PgBossService,
  RUNS_QUEUE,
  RunJobsRepository,
  runsOf,
  type HandedOffJob,
  type RunJob,
  type RunsJob,
} from '../queue';
import { RunExecutor } from './run-executor';
import type { WorkerLane, WorkerSlots } from './worker-slots';

/** The least interval between two room reports to a poller in another process. */
const ROOM_REPORT_MS = 20;
/** Handed-off jobs deleted in one statement at most. */
const DELETE_BATCH = 1000;

/** A handed-off job, and when it must have started (or be left to the queue). */
interface HandedJob {
  job: HandedOffJob;
  deadline: number;
}

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
  private leaveHandoff: (() => void) | null = null;
  /** Handed-off jobs being claimed or deleted: a stop waits for them, as for the fetch loops. */
  private readonly handoffs = new Set<Promise<void>>();
  /** Handed-off jobs by lane, gathered as a fetch would (see takeHandoff). */
  private readonly handedOff: Record<WorkerLane, Batcher<HandedJob, void>>;
  /**
   * Deletes of handed-off jobs whose runs are claimed, by lane (its queue): one may wait a little
   * for others (WORKER_WRITE_LINGER_MS, at most a quarter of the grace, so it lands before any
   * fetch could take the job), lone runs' jobs then go in one statement.
   */
  private readonly deletions: Record<WorkerLane, Batcher<string, void>>;

  constructor(
    private readonly queue: PgBossService,
    private readonly jobs: RunJobsRepository,
    private readonly executor: RunExecutor,
    private readonly lifecycle: Lifecycle,
    private readonly handoff: RunHandoff,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const { batchSize } = config.worker;
    // As many jobs as a full fetch's runs fill (jobs carry up to QUEUE_RUNS_PER_JOB runs).
    const jobsAtOnce = Math.max(1, Math.floor(batchSize / config.queue.runsPerJob));
    const lane = (name: WorkerLane) =>
      new Batcher<HandedJob, void>((handed) => this.startHandedOff(handed, name), {
        maxBatch: jobsAtOnce,
        idOf: ({ job }) => job.id,
      });
    this.handedOff = { high: lane('high'), other: lane('other') };
    const lingerMs = Math.min(config.worker.writeLingerMs, handoff.graceMs / 4);
    const deletion = (queue: string) =>
      new Batcher<string, void>(
        async (ids) => {
          await this.jobs.deleteHandedOff(queue, ids);
          return ids.map(() => undefined);
        },
        { maxBatch: DELETE_BATCH, idOf: (id) => id, lingerMs },
      );
    this.deletions = { high: deletion(HIGH_RUNS_QUEUE), other: deletion(RUNS_QUEUE) };
  }

  async onApplicationBootstrap(): Promise<void> {
    const { batchSize } = this.config.worker;
    const { concurrency, otherSlots } = this.slots;
    // `high` runs may take every slot; the others never the reserved share, so a fleet saturated
    // by normal and low runs still has slots free the moment a high run is admitted.
    const reserved = concurrency - otherSlots;
    // A high batch fits the reserved slots, so it is fetched while the other lane is full.
    const highBatch = Math.min(batchSize, reserved > 0 ? reserved : concurrency);
    const otherBatch = Math.min(batchSize, otherSlots);
    this.workIds.push(
      await this.consume(HIGH_RUNS_QUEUE, 'high', highBatch),
      await this.consume(RUNS_QUEUE, 'other', otherBatch),
    );
    // The poller of this same process hands it runs directly (a pool's children are registered
    // by the pool, over their IPC channel).
    if (this.config.roles.has('poller')) {
      this.leaveHandoff = this.handoff.register({
        room: () => this.room(),
        take: (jobs) => void this.takeHandoff(jobs),
      });
    }
    this.lifecycle.emit({ kind: 'role.started', role: 'worker' });
    this.logger.log({ workerId: this.executor.workerId, reserved }, 'worker started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    this.leaveHandoff?.();
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
    // Claims first, then the deletes they start.
    while (this.handoffs.size > 0) await Promise.all(this.handoffs);
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

  /** This worker's slots, shared by the fetch loops and the handed-off runs. */
  private get slots(): WorkerSlots {
    return this.executor.slots;
  }

  /**
   * One fetch loop on `queue`, claiming `batchSize` runs at a time: a fetch takes four times as
   * many jobs as that many runs fill when each carries QUEUE_RUNS_PER_JOB. pg-boss sleeps a
   * polling interval after every fetch unless the fetch came back full (burstWhenBatchFull):
   * fetch batches, so a backlog drains continuously instead of one job per loop per poll. The
   * handler returns once the runs are claimed (the jobs are then deleted); the attempts go on.
   * It fetches again only once `lane` has room for another batch; the fetched runs still take
   * their slots before their claim (handed-off runs may have taken that room meanwhile).
   */
  private async consume(
    queue: string,
    lane: WorkerLane,
    batchSize: number,
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
          const slice = runs.slice(from, from + batchSize);
          // Stopping: the rest go back to the queue (a retried job; what this worker claimed
          // of it is refused then, as a run's second job is). The first slice is claimed (a
          // fetched job is not spent on a retry for nothing).
          const abandon = () => from > 0 && this.stopping;
          if (!(await this.slots.take(lane, slice.length, Infinity, abandon))) {
            throw new WorkerStopping(runs.length - from);
          }
          await this.executor.start(slice, (inMs) => this.wakeIn(inMs), lane);
        }
        // Claimed: the jobs have done their work. A failed delete leaves them to pg-boss's
        // completion and its retention (QUEUE_FINISHED_JOB_RETENTION_SECONDS).
        await this.jobs
          .deleteClaimed(queue, jobs)
          .catch((error: unknown) =>
            this.logger.warn({ err: errorSummary(error) }, 'run jobs not deleted'),
          );
        await this.slots.whenFree(lane, batchSize);
      },
    );
    return { queue, id };
  }

  /** Free slots now: any for a `high` run, those outside the reserved share for the others. */
  room(): HandoffRoom {
    return this.slots.room();
  }

  /**
   * Reports the room (at once, then at most every ROOM_REPORT_MS while it changes) to a
   * poller in another process that hands this worker runs.
   */
  reportRoom(report: (room: HandoffRoom) => void): void {
    let pending: NodeJS.Timeout | null = null;
    this.slots.watch(() => {
      if (pending) return;
      pending = setTimeout(() => {
        pending = null;
        report(this.room());
      }, ROOM_REPORT_MS);
      pending.unref();
    });
    report(this.room());
  }

  /**
   * Runs the poller handed to this worker (see handoff/): claimed as soon as they have room, then
   * their jobs are deleted. Jobs handed over while the lane's previous ones are being claimed are
   * claimed together next, as a fetch would have taken them (one claim, one targets read, one
   * delete). A job is left to the queue, where any worker fetches it once its grace ends, when
   * this worker is stopping, finds no room within half the grace, or cannot reach the database
   * to claim.
   */
  async takeHandoff(jobs: readonly HandedOffJob[]): Promise<void> {
    const deadline = Date.now() + this.handoff.graceMs / 2;
    const taking = Promise.all(
      jobs.map((job) =>
        this.handedOff[job.queue === HIGH_RUNS_QUEUE ? 'high' : 'other'].submit({ job, deadline }),
      ),
    ).then(() => undefined);
    this.handoffs.add(taking);
    try {
      await taking;
    } finally {
      this.handoffs.delete(taking);
    }
  }

  /** One lane's handed-off jobs, gathered while the lane's previous ones were claimed. */
  private async startHandedOff(handed: readonly HandedJob[], lane: WorkerLane): Promise<void[]> {
    const done = handed.map(() => undefined);
    const runs = handed.flatMap(({ job }) => job.runs);
    const deadline = Math.min(...handed.map((h) => h.deadline));
    if (!(await this.slots.take(lane, runs.length, deadline, () => this.stopping))) {
      this.lifecycle.emit({ kind: 'handoff.released', runs: runs.length });
      return done;
    }
    try {
      await this.executor.start(runs, (inMs) => this.wakeIn(inMs), lane);
    } catch (error) {
      this.logger.warn({ err: errorSummary(error) }, 'handed-off runs left to the queue');
      return done;
    }
    // Not awaited: the lane's next jobs need not wait for it (a stop does, see `handoffs`).
    const deletion = this.deletions[lane];
    const deleted: Promise<void> = Promise.all(handed.map(({ job }) => deletion.submit(job.id)))
      .then(() => undefined)
      .catch((error: unknown) =>
        this.logger.warn({ err: errorSummary(error) }, 'handed-off jobs not deleted'),
      )
      .finally(() => this.handoffs.delete(deleted));
    this.handoffs.add(deleted);
    return done;
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
