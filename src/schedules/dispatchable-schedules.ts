import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Schedule, ScheduleStatus } from './schedule';
import { toSchedule } from './schedule.mapper';
import { ScheduleEntity } from './schedule.entity';
import { ADVANCE_SCHEDULES, LOCK_SCHEDULES_FOR_DISPATCH } from './schedules.sql';

/** The schedules side of the poller's dispatch transaction. */
@Injectable()
export class DispatchableSchedules {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** Locks and reads the given schedules; ones locked by an edit are left out. */
  async lock(em: EntityManager, ids: readonly string[]): Promise<Map<string, Schedule>> {
    if (ids.length === 0) return new Map();
    const raw: Array<Record<string, unknown>> = await em.query(LOCK_SCHEDULES_FOR_DISPATCH, [ids]);
    const metadata = this.dataSource.getMetadata(ScheduleEntity);
    const schedules = raw.map((row) => toSchedule(this.fromRaw(metadata.columns, row)));
    return new Map(schedules.map((s) => [s.id, s]));
  }

  async advance(
    em: EntityManager,
    changes: ReadonlyArray<{
      id: string;
      revision: number;
      nextDueAt: Date | null;
      status: ScheduleStatus;
    }>,
  ): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map((c) => ({
      id: c.id,
      revision: c.revision,
      next_due_at: c.nextDueAt?.toISOString() ?? null,
      status: c.status,
    }));
    await em.query(ADVANCE_SCHEDULES, [JSON.stringify(rows)]);
  }

  private fromRaw(
    columns: ReadonlyArray<{ propertyName: string; databaseName: string }>,
    row: Record<string, unknown>,
  ): ScheduleEntity {
    const entity = new ScheduleEntity();
    for (const column of columns) {
      (entity as unknown as Record<string, unknown>)[column.propertyName] =
        row[column.databaseName];
    }
    return entity;
  }
}
