import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import {
  ADMIT_SCHEDULES,
  LOCK_SCHEDULE_COUNT,
  LOCK_SCHEDULE_COUNTS,
  READ_SCHEDULE_COUNT,
  RELEASE_SCHEDULES,
} from './schedule-quota.sql';

/** Slots to give back, per tenant id. */
export type SlotRelease = ReadonlyMap<string, number>;

/** The per-tenant count of live schedules behind maxActiveSchedules (see schedule-quota.sql.ts). */
@Injectable()
export class ScheduleQuotaRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** Takes `count` slots if they all fit under `max`; false (nothing taken) when they do not. */
  async admit(tx: Tx, tenantId: string, count: number, max: number): Promise<boolean> {
    const rows = await this.sql.rows(ADMIT_SCHEDULES, [tenantId, count, max], tx);
    return rows.length > 0;
  }

  /** The tenant's live count, locked until the transaction ends. */
  async lockCount(tx: Tx, tenantId: string): Promise<number> {
    const [row] = await this.sql.rows<{ live: number }>(LOCK_SCHEDULE_COUNT, [tenantId], tx);
    return row.live;
  }

  /** The tenant's live count now (no lock). */
  async liveCount(tenantId: string): Promise<number> {
    const [row] = await this.sql.rows<{ live: number }>(READ_SCHEDULE_COUNT, [tenantId]);
    return row?.live ?? 0;
  }

  /**
   * Gives the slots back as the transaction's last statements (SqlRunner.rowsAtCommit): the
   * counters, which every create of those tenants needs, are locked only from here to the
   * commit, which travels with them. A failure (the CHECK of a release never admitted) rolls
   * the transaction back.
   */
  release(tx: Tx, released: SlotRelease): void {
    const entries = [...released].filter(([, n]) => n > 0);
    if (entries.length === 0) return;
    const tenants = entries.map(([tenantId]) => tenantId);
    if (entries.length > 1) void this.sql.rowsAtCommit(LOCK_SCHEDULE_COUNTS, [tenants], tx);
    void this.sql.rowsAtCommit(RELEASE_SCHEDULES, [tenants, entries.map(([, n]) => n)], tx);
  }
}
