import { Injectable } from '@nestjs/common';
import type { Db } from 'pg-boss';
import { SqlRunner, type Tx } from '../database';
import { PgBossService } from './pg-boss.service';
import { RUNS_QUEUE, type RunJob } from './queue.constants';

/**
 * The outbox: run jobs written into pg-boss's tables inside the caller's transaction, so a run
 * and its job commit or roll back together. Publishing a run twice is harmless: workers claim
 * the run, not the message.
 */
@Injectable()
export class RunJobsRepository {
  constructor(
    private readonly queue: PgBossService,
    private readonly sql: SqlRunner,
  ) {}

  /** Jobs due now (or all at `startAfter`). */
  async publish(tx: Tx, runs: readonly RunJob[], startAfter?: Date): Promise<void> {
    if (runs.length === 0) return;
    await this.queue.boss.insert(
      RUNS_QUEUE,
      runs.map((run) => ({ data: run, ...(startAfter ? { startAfter } : {}) })),
      { db: this.db(tx) },
    );
  }

  /** Jobs that each become due at their own time. */
  async publishEach(tx: Tx, jobs: ReadonlyArray<{ job: RunJob; startAfter: Date }>): Promise<void> {
    if (jobs.length === 0) return;
    await this.queue.boss.insert(
      RUNS_QUEUE,
      jobs.map(({ job, startAfter }) => ({ data: job, startAfter })),
      { db: this.db(tx) },
    );
  }

  /** A pg-boss `db` that runs its statements inside the given transaction. */
  private db(tx: Tx): Db {
    const manager = this.sql.manager(tx);
    return {
      executeSql: async (text: string, values?: unknown[]) => ({
        rows: await manager.query(text, values as unknown[]),
      }),
    };
  }
}
