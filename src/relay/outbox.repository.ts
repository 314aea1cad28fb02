import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import { priorityOfRank } from '../run-vocabulary';
import { RUN_QUEUES, type RunToPublish } from '../queue';
import { FIND_ORPHANED_QUEUED_RUNS, OLDEST_QUEUED_AGE } from './outbox.sql';

/** What the relay reads of the outbox: QUEUED runs and the queue jobs they should have. */
@Injectable()
export class OutboxRepository {
  constructor(private readonly sql: SqlRunner) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }

  /** QUEUED runs without a live job, locked until `tx` ends (see FIND_ORPHANED_QUEUED_RUNS). */
  async lockOrphans(
    tx: Tx,
    options: { minAgeSeconds: number; limit: number; staleActiveSeconds: number },
  ): Promise<RunToPublish[]> {
    const rows = await this.sql.rows<{
      id: string;
      tenant_id: string;
      priority: number;
      scheduled_at: Date;
    }>(
      FIND_ORPHANED_QUEUED_RUNS,
      [options.minAgeSeconds, options.limit, options.staleActiveSeconds, RUN_QUEUES],
      tx,
    );
    return rows.map((r) => ({
      runId: r.id,
      tenantId: r.tenant_id,
      scheduledAt: r.scheduled_at,
      priority: priorityOfRank(r.priority),
    }));
  }

  async oldestQueuedAgeSeconds(): Promise<number> {
    const [row] = await this.sql.rows<{ age_seconds: number }>(OLDEST_QUEUED_AGE);
    return row?.age_seconds ?? 0;
  }
}
