import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { INSERT_DUE_ENTRY, REMOVE_DUE_ENTRIES } from './due-index.sql';
import { shardOf } from './shard';

export interface DueEntry {
  scheduleId: string;
  tenantId: string;
  revision: number;
  dueAt: Date;
}

/**
 * Writes to the due-time index always happen inside the transaction that changes the schedule
 * (the caller's EntityManager), so a committed schedule always has its matching entry.
 */
@Injectable()
export class DueIndexService {
  async replace(em: EntityManager, entry: DueEntry): Promise<void> {
    await em.query(REMOVE_DUE_ENTRIES, [entry.scheduleId]);
    await em.query(INSERT_DUE_ENTRY, [
      shardOf(entry.scheduleId),
      entry.dueAt,
      entry.scheduleId,
      entry.tenantId,
      entry.revision,
    ]);
  }

  async remove(em: EntityManager, scheduleId: string): Promise<void> {
    await em.query(REMOVE_DUE_ENTRIES, [scheduleId]);
  }
}
