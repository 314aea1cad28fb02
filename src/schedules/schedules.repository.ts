import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { RunPriority } from '../run-vocabulary';
import {
  DispatchSchedule,
  PauseReason,
  Schedule,
  ScheduleDefinition,
  ScheduleStatus,
} from './schedule';
import { definitionColumns, toDispatchSchedule, toSchedule } from './schedule.mapper';
import { ScheduleEntity } from './schedule.entity';
import type { SlotRelease } from './schedule-quota.repository';
import {
  ADVANCE_SCHEDULES,
  AUTO_PAUSE_STILL_DUE,
  CLAIM_IDEMPOTENCY_KEYS,
  DELETE_NEW_SCHEDULES,
  FORGET_IDEMPOTENCY_KEYS,
  INSERT_SCHEDULES,
  LOCK_SCHEDULE,
  LOCK_SCHEDULE_FOR_TRIGGER,
  LOCK_SCHEDULES_FOR_DISPATCH,
  LOCK_SCHEDULES_FOR_RUNS,
  PRUNE_IDEMPOTENCY_KEYS,
  READ_IDEMPOTENCY_KEYS,
  SCHEDULES_TO_AUTO_PAUSE,
  SELECT_SCHEDULES,
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

export interface IdempotencyClaim {
  key: string;
  requestSha256: Buffer;
  scheduleId: string;
}

export interface NewSchedule {
  id: string;
  definition: ScheduleDefinition;
  nextDueAt: Date | null;
  traceParent?: string | null;
  /** The API key that creates it (revision 1's author); null when dueline does. */
  createdByApiKeyId: string | null;
}

export interface ScheduleAdvance {
  id: string;
  revision: number;
  nextDueAt: Date | null;
  status: ScheduleStatus;
  /** Runs this dispatch created to run, added to the schedule's run_count (maxRuns). */
  runsCreated: number;
}

@Injectable()
export class SchedulesRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** Claims the keys that are free; returns those this transaction claimed. */
  async claimIdempotencyKeys(
    tx: Tx,
    tenantId: string,
    keys: readonly IdempotencyClaim[],
  ): Promise<Set<string>> {
    const rows = await this.sql.rows<{ key: string }>(
      CLAIM_IDEMPOTENCY_KEYS,
      [
        tenantId,
        keys.map((k) => k.key),
        keys.map((k) => k.requestSha256.toString('hex')),
        keys.map((k) => k.scheduleId),
      ],
      tx,
    );
    return new Set(rows.map((row) => row.key));
  }

  async readIdempotencyKeys(
    tx: Tx,
    tenantId: string,
    keys: readonly string[],
  ): Promise<Map<string, { requestSha256: Buffer; scheduleId: string }>> {
    if (keys.length === 0) return new Map();
    const rows = await this.sql.rows(READ_IDEMPOTENCY_KEYS, [tenantId, keys], tx);
    return new Map(
      rows.map((row) => [
        row.key as string,
        {
          requestSha256: Buffer.from(row.request_sha256 as Buffer),
          scheduleId: row.schedule_id as string,
        },
      ]),
    );
  }

  async forgetIdempotencyKeys(tx: Tx, tenantId: string, keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.sql.affected(FORGET_IDEMPOTENCY_KEYS, [tenantId, keys], tx);
  }

  /** Inserts new active schedules at revision 1 in one statement; returns them as stored. */
  async insertMany(
    tx: Tx,
    tenantId: string,
    schedules: readonly NewSchedule[],
  ): Promise<Schedule[]> {
    if (schedules.length === 0) return [];
    const columns = this.columns(tx);
    const rows = schedules.map((s) => ({
      ...byColumnName(columns, definitionColumns(s.definition)),
      id: s.id,
      next_due_at: s.nextDueAt?.toISOString() ?? null,
      trace_parent: s.traceParent ?? null,
      created_by_key_id: s.createdByApiKeyId,
    }));
    const raw = await this.sql.rows(INSERT_SCHEDULES, [tenantId, JSON.stringify(rows)], tx);
    return raw.map((row) => toSchedule(fromRaw(columns, row)));
  }

  /** Takes back schedules this transaction inserted (see DELETE_NEW_SCHEDULES). */
  async deleteNew(tx: Tx, tenantId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.sql.affected(DELETE_NEW_SCHEDULES, [tenantId, ids], tx);
  }

  async findByIds(
    tenantId: string,
    ids: readonly string[],
    tx?: Tx,
  ): Promise<Map<string, Schedule>> {
    if (ids.length === 0) return new Map();
    const raw = await this.sql.rows(SELECT_SCHEDULES, [tenantId, ids], tx);
    const columns = this.columns(tx);
    return new Map(raw.map((row) => toSchedule(fromRaw(columns, row))).map((s) => [s.id, s]));
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
    next: {
      definition: ScheduleDefinition;
      status: ScheduleStatus;
      nextDueAt: Date | null;
      pausedReason?: PauseReason;
      note?: string;
    },
  ): Promise<number> {
    const revision = current.revision + 1;
    const paused = next.status === 'paused';
    const resumed = current.status === 'paused' && next.status === 'active';
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
          // A pause says why until the schedule is resumed; a resume starts the failure count
          // again, so the runs that caused an auto-pause cannot cause another.
          pausedReason: paused
            ? (next.pausedReason ?? current.pausedReason ?? 'paused_by_request')
            : null,
          pausedNote: paused
            ? (next.note ?? (current.status === 'paused' ? current.pausedNote : null))
            : null,
          ...(resumed ? { failuresCountedFrom: () => 'now()' } : {}),
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
    options: {
      status?: ScheduleStatus;
      labels?: Record<string, string>;
      limit: number;
      afterId?: string;
    },
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
    if (options.labels && Object.keys(options.labels).length > 0) {
      // Containment, served by the GIN index schedules_labels_idx (jsonb_path_ops).
      query.andWhere('s.labels @> CAST(:labels AS jsonb)', {
        labels: JSON.stringify(options.labels),
      });
    }
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
  async lockForDispatch(tx: Tx, ids: readonly string[]): Promise<Map<string, DispatchSchedule>> {
    if (ids.length === 0) return new Map();
    const raw = await this.sql.rows(LOCK_SCHEDULES_FOR_DISPATCH, [ids], tx);
    const columns = this.columns(tx);
    const schedules = raw.map((row) => toDispatchSchedule(fromRaw(columns, row)));
    return new Map(schedules.map((s) => [s.id, s]));
  }

  /** Reads and holds FOR SHARE the tenant's schedules that runs are about to be created for. */
  async lockForRuns(
    tx: Tx,
    tenantId: string,
    ids: readonly string[],
  ): Promise<Map<string, Schedule>> {
    if (ids.length === 0) return new Map();
    const raw = await this.sql.rows(LOCK_SCHEDULES_FOR_RUNS, [tenantId, [...new Set(ids)]], tx);
    const columns = this.columns(tx);
    return new Map(raw.map((row) => toSchedule(fromRaw(columns, row))).map((s) => [s.id, s]));
  }

  async toAutoPause(
    since: Date,
    limit: number,
  ): Promise<Array<{ id: string; tenantId: string; revision: number }>> {
    const rows = await this.sql.rows(SCHEDULES_TO_AUTO_PAUSE, [since, limit]);
    return rows.map((row) => ({
      id: row.id as string,
      tenantId: row.tenant_id as string,
      revision: row.revision as number,
    }));
  }

  /** The runs of the streak if the locked schedule is still to auto-pause, else null. */
  async autoPauseStreak(tx: Tx, id: string): Promise<string[] | null> {
    const [row] = await this.sql.rows(AUTO_PAUSE_STILL_DUE, [id], tx);
    return row ? (row.run_ids as string[]) : null;
  }

  /** Moves schedules on after dispatch; returns the slots of those that completed, by tenant. */
  async advance(
    tx: Tx,
    changes: readonly ScheduleAdvance[],
  ): Promise<{ slots: SlotRelease; ended: string[] }> {
    if (changes.length === 0) return { slots: new Map(), ended: [] };
    const rows = changes.map((c) => ({
      id: c.id,
      revision: c.revision,
      next_due_at: c.nextDueAt?.toISOString() ?? null,
      status: c.status,
      runs: c.runsCreated,
    }));
    const ended = await this.sql.rows<{ tenant_id: string; ended: number; ids: string[] }>(
      ADVANCE_SCHEDULES,
      [JSON.stringify(rows), rows.map((row) => row.id)],
      tx,
    );
    return {
      slots: new Map(ended.map((row) => [row.tenant_id, row.ended])),
      ended: ended.flatMap((row) => row.ids),
    };
  }

  private columns(tx?: Tx): readonly EntityColumn[] {
    return this.sql.manager(tx).connection.getMetadata(ScheduleEntity).columns;
  }
}

type EntityColumn = { propertyName: string; databaseName: string };

function fromRaw(columns: readonly EntityColumn[], row: Row): ScheduleEntity {
  const entity = new ScheduleEntity();
  for (const column of columns) {
    (entity as unknown as Record<string, unknown>)[column.propertyName] = row[column.databaseName];
  }
  return entity;
}

/** Entity values keyed by column name, dates as ISO text (a JSON row of INSERT_SCHEDULES). */
function byColumnName(
  columns: readonly EntityColumn[],
  values: Partial<ScheduleEntity>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const column of columns) {
    if (!(column.propertyName in values)) continue;
    const value = (values as Record<string, unknown>)[column.propertyName];
    out[column.databaseName] = value instanceof Date ? value.toISOString() : value;
  }
  return out;
}
