import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import type { RunToPublish } from '../queue';
import { priorityOfRank, type WaitReason } from '../run-vocabulary';
import type { ActiveRuns } from './overlap-policy';
import { ACTIVE_RUNS_BY_SCHEDULE, LOCK_SCHEDULE_SHARED, NEXT_WAITING_RUN } from './overlap.sql';

const WAITING: WaitReason = 'waiting_for_previous';

@Injectable()
export class OverlapRepository {
  constructor(private readonly sql: SqlRunner) {}

  async activeRuns(tx: Tx, scheduleIds: readonly string[]): Promise<Map<string, ActiveRuns>> {
    if (scheduleIds.length === 0) return new Map();
    const rows = await this.sql.rows<{ schedule_id: string; active: boolean; waiting: number }>(
      ACTIVE_RUNS_BY_SCHEDULE,
      [scheduleIds, WAITING],
      tx,
    );
    return new Map(rows.map((r) => [r.schedule_id, { active: r.active, waiting: r.waiting }]));
  }

  async nextWaitingRun(tx: Tx, scheduleId: string): Promise<RunToPublish | null> {
    await this.sql.rows(LOCK_SCHEDULE_SHARED, [scheduleId], tx);
    const [row] = await this.sql.rows<{
      id: string;
      tenant_id: string;
      priority: number;
      scheduled_at: Date;
    }>(NEXT_WAITING_RUN, [scheduleId, WAITING], tx);
    return row
      ? {
          runId: row.id,
          tenantId: row.tenant_id,
          scheduledAt: row.scheduled_at,
          priority: priorityOfRank(row.priority),
        }
      : null;
  }
}
