import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { RunPriority } from '../run-vocabulary';
import { Schedule, ScheduleDefinition, ScheduleStatus } from './schedule';
import { definitionColumns, toSchedule } from './schedule.mapper';
import { ScheduleEntity } from './schedule.entity';
import {
  ADVANCE_SCHEDULES,
  CLAIM_IDEMPOTENCY_KEY,
  COUNT_LIVE_SCHEDULES,
  LOCK_SCHEDULE,
  LOCK_SCHEDULE_FOR_TRIGGER,
  LOCK_SCHEDULES_FOR_DISPATCH,
  LOCK_TENANT,
  PRUNE_IDEMPOTENCY_KEYS,
  READ_IDEMPOTENCY_KEY,
} from './schedules.sql';

export interface ListPage {
  items: Schedule[];
  /** Id of the last item when there is a next page. */
  nextAfterId: string | null;
}

/** The schedule a manual trigger runs, read FOR SHARE, with the database clock. */
export interface TriggerSchedule {
  id: string;
  tenantId: string;
  revision: number;
  status: ScheduleStatus;
  timezone: string | null;
  maxAttempts: number;
  retryDeadlineSeconds: number;
  priority: RunPriority;
  startDeadlineSeconds: number | null;
  dbNow: Date;
}

export interface ScheduleAdvance {
  id: string;
  revision: number;
  nextDueAt: Date | null;
  status: ScheduleStatus;
}

@Injectable()
export class SchedulesRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** True when this request claimed the key; false when another request claimed it first. */
  async claimIdempotencyKey(
    tx: Tx,
    key: { tenantId: string; key: string; requestSha256: Buffer; scheduleId: string },
  ): Promise<boolean> {
    const rows = await this.sql.rows(
      CLAIM_IDEMPOTENCY_KEY,
      [key.tenantId, key.key, key.requestSha256, key.scheduleId],
      tx,
    );
    return rows.length > 0;
  }

  async readIdempotencyKey(
    tx: Tx,
    tenantId: string,
    key: string,
  ): Promise<{ requestSha256: Buffer; scheduleId: string } | null> {
    const [row] = await this.sql.rows(READ_IDEMPOTENCY_KEY, [tenantId, key], tx);
    if (!row) return null;
    return {
      requestSha256: Buffer.from(row.request_sha256 as Buffer),
      scheduleId: row.schedule_id as string,
    };
  }

  /** Locks the tenant against other creates (see LOCK_TENANT) and counts its live schedules. */
  async lockTenantAndCountLive(tx: Tx, tenantId: string): Promise<number> {
    await this.sql.rows(LOCK_TENANT, [tenantId], tx);
    const [{ n }] = await this.sql.rows<{ n: number }>(COUNT_LIVE_SCHEDULES, [tenantId], tx);
    return n;
  }

  async insert(
    tx: Tx,
    schedule: {
      id: string;
      tenantId: string;
      definition: ScheduleDefinition;
      nextDueAt: Date | null;
    },
  ): Promise<void> {
    const repository = this.sql.manager(tx).getRepository(ScheduleEntity);
    await repository.insert(
      repository.create({
        ...definitionColumns(schedule.definition),
        id: schedule.id,
        tenantId: schedule.tenantId,
        revision: 1,
        status: 'active',
        nextDueAt: schedule.nextDueAt,
      }),
    );
  }

  /** Reads a schedule for an edit and holds it FOR UPDATE until the edit commits. */
  async lockForEdit(tx: Tx, tenantId: string, id: string): Promise<Schedule | null> {
    const locked = await this.sql.rows(LOCK_SCHEDULE, [tenantId, id], tx);
    return locked.length === 0 ? null : this.findById(tenantId, id, tx);
  }

  /**
   * Writes an edit as the next revision, only over the revision that was read (the row is
   * locked, so this holds; the condition says it anyway).
   */
  async writeRevision(
    tx: Tx,
    current: Schedule,
    next: { definition: ScheduleDefinition; status: ScheduleStatus; nextDueAt: Date | null },
  ): Promise<number> {
    const revision = current.revision + 1;
    await this.sql
      .manager(tx)
      .getRepository(ScheduleEntity)
      .update(
        { id: current.id, tenantId: current.tenantId, revision: current.revision },
        {
          ...definitionColumns(next.definition),
          status: next.status,
          nextDueAt: next.nextDueAt,
          revision,
          updatedAt: () => 'now()',
        },
      );
    return revision;
  }

  async pruneIdempotencyKeys(limit: number): Promise<number> {
    return this.sql.affected(PRUNE_IDEMPOTENCY_KEYS, [limit]);
  }

  async findById(tenantId: string, id: string, tx?: Tx): Promise<Schedule | null> {
    const row = await this.sql
      .manager(tx)
      .getRepository(ScheduleEntity)
      .findOneBy({ tenantId, id });
    return row ? toSchedule(row) : null;
  }

  /** Keyset pagination by (created_at, id): stable under concurrent inserts, no OFFSET scans. */
  async list(
    tenantId: string,
    options: { status?: ScheduleStatus; limit: number; afterId?: string },
  ): Promise<ListPage> {
    const query = this.sql
      .manager()
      .getRepository(ScheduleEntity)
      .createQueryBuilder('s')
      .where('s.tenant_id = :tenantId', { tenantId })
      .orderBy('s.created_at', 'ASC')
      .addOrderBy('s.id', 'ASC')
      .limit(options.limit + 1);
    if (options.status) query.andWhere('s.status = :status', { status: options.status });
    if (options.afterId) {
      // Compare against the stored row, not a timestamp from the client: created_at has
      // microseconds that a JavaScript Date would round away.
      query.andWhere(
        '(s.created_at, s.id) > (SELECT c.created_at, c.id FROM schedules c WHERE c.tenant_id = :tenantId AND c.id = :afterId)',
        { afterId: options.afterId },
      );
    }
    const rows = await query.getMany();
    const items = rows.slice(0, options.limit).map(toSchedule);
    const last = items[items.length - 1];
    return {
      items,
      nextAfterId: rows.length > options.limit && last ? last.id : null,
    };
  }

  async lockForTrigger(tx: Tx, tenantId: string, id: string): Promise<TriggerSchedule | null> {
    const [row] = await this.sql.rows(LOCK_SCHEDULE_FOR_TRIGGER, [tenantId, id], tx);
    if (!row) return null;
    return {
      id: row.id as string,
      tenantId: row.tenant_id as string,
      revision: row.revision as number,
      status: row.status as ScheduleStatus,
      timezone: row.timezone as string | null,
      maxAttempts: row.retry_max_attempts as number,
      retryDeadlineSeconds: row.retry_deadline_seconds as number,
      priority: row.priority as RunPriority,
      startDeadlineSeconds: row.start_deadline_seconds as number | null,
      dbNow: row.db_now as Date,
    };
  }

  /** Locks and reads the given schedules for dispatch; ones locked by an edit are left out. */
  async lockForDispatch(tx: Tx, ids: readonly string[]): Promise<Map<string, Schedule>> {
    if (ids.length === 0) return new Map();
    const raw = await this.sql.rows(LOCK_SCHEDULES_FOR_DISPATCH, [ids], tx);
    const columns = this.sql.manager(tx).connection.getMetadata(ScheduleEntity).columns;
    const schedules = raw.map((row) => toSchedule(fromRaw(columns, row)));
    return new Map(schedules.map((s) => [s.id, s]));
  }

  async advance(tx: Tx, changes: readonly ScheduleAdvance[]): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map((c) => ({
      id: c.id,
      revision: c.revision,
      next_due_at: c.nextDueAt?.toISOString() ?? null,
      status: c.status,
    }));
    await this.sql.affected(ADVANCE_SCHEDULES, [JSON.stringify(rows)], tx);
  }
}

function fromRaw(
  columns: ReadonlyArray<{ propertyName: string; databaseName: string }>,
  row: Row,
): ScheduleEntity {
  const entity = new ScheduleEntity();
  for (const column of columns) {
    (entity as unknown as Record<string, unknown>)[column.propertyName] = row[column.databaseName];
  }
  return entity;
}
