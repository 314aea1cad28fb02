import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { Db, Job } from 'pg-boss';
import { APP_CONFIG, type AppConfig } from '../config';
import { SqlRunner, type Tx } from '../database';
import { PgBossService } from './pg-boss.service';
import type { HandedOffJob, RunJob, RunsJob, RunToPublish } from './queue.constants';
import { groupRuns } from './run-job-batches';

/**
 * The outbox: run jobs written into pg-boss's tables inside the caller's transaction, so a run
 * and its job commit or roll back together. Runs published together on one queue and due at the
 * same moment share a job (up to QUEUE_RUNS_PER_JOB). Publishing a run twice is harmless:
 * workers claim the run, not the message.
 */
@Injectable()
export class RunJobsRepository {
  constructor(
    private readonly queue: PgBossService,
    private readonly sql: SqlRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Jobs due now (or all at `startAfter`), each on its priority's queue. */
  async publish(tx: Tx, runs: readonly RunToPublish[], startAfter?: Date): Promise<void> {
    await this.publishEach(
      tx,
      runs.map((run) => ({ job: run, startAfter })),
    );
  }

  /** Runs that each become due at their own time (now, without one). */
  async publishEach(
    tx: Tx,
    jobs: ReadonlyArray<{ job: RunToPublish; startAfter?: Date }>,
  ): Promise<void> {
    const byQueue = new Map<string, Array<{ data: RunsJob; startAfter?: Date }>>();
    for (const { queue, startAfter, runs } of groupRuns(jobs, this.config.queue.runsPerJob)) {
      const batch = byQueue.get(queue) ?? [];
      batch.push({ data: { runs }, ...(startAfter ? { startAfter } : {}) });
      byQueue.set(queue, batch);
    }
    for (const [queue, batch] of byQueue) {
      await this.queue.boss.insert(queue, batch, { db: this.db(tx) });
    }
  }

  /**
   * Jobs for runs handed to a worker beside the publisher: the same jobs as publish() writes, but
   * with ids chosen here (returned, for the worker to delete them by) and fetchable only `graceMs`
   * after the insert, so no fetch races the worker that takes them; past the grace, they are any
   * worker's. Being future-dated, their insert wakes no listener.
   */
  async publishHandedOff(
    tx: Tx,
    runs: readonly RunToPublish[],
    graceMs: number,
  ): Promise<HandedOffJob[]> {
    const handed = groupRuns(
      runs.map((job) => ({ job })),
      this.config.queue.runsPerJob,
    ).map(({ queue, runs: jobRuns }) => ({ queue, id: randomUUID(), runs: jobRuns }));
    // pg-boss adds a number of seconds to its clock at the insert (job_now() + interval).
    const startAfter = graceMs / 1000;
    for (const queue of new Set(handed.map((job) => job.queue))) {
      const jobs = handed.filter((job) => job.queue === queue);
      await this.queue.boss.insert(
        queue,
        jobs.map((job) => ({ id: job.id, data: { runs: job.runs }, startAfter })),
        { db: this.db(tx) },
      );
    }
    return handed;
  }

  /**
   * Deletes handed-off jobs whose runs the worker that took them has claimed. Not fenced to an
   * attempt: a handed-off job is fetched by no one before its grace ends, and one fetched after
   * it carries runs claimed already, which its fetcher's claim refuses whether or not the job is
   * still there.
   */
  async deleteHandedOff(queue: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.queue.boss.deleteJob(queue, [...ids]);
  }

  /**
   * Deletes the jobs of a fetched batch once their runs are claimed (or refused and requeued):
   * from the claim on, the run's lease and the sweeper guarantee it an end, so the job has done
   * its work, and deleting it now instead of completing it keeps pgboss.job from growing with
   * every delivered run (one statement per batch; pg-boss's completion afterwards finds nothing
   * to do). Fenced per attempt: a job that pg-boss re-delivered meanwhile is not touched.
   */
  async deleteClaimed(queue: string, jobs: ReadonlyArray<Job<RunsJob | RunJob>>): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.boss.deleteJob(
      queue,
      jobs.map((job) => ({ id: job.id, retryCount: job.retryCount })),
    );
  }

  /**
   * A pg-boss `db` that runs its statements inside the given transaction, prepared like ours
   * (its job insert is one text per queue: parsed and planned once per connection).
   */
  private db(tx: Tx): Db {
    return {
      executeSql: async (text: string, values?: unknown[]) => ({
        rows: await this.sql.rows(text, values ?? [], tx),
      }),
    };
  }
}
