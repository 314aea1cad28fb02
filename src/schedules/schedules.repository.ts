import { queryAffected } from '../database/sql';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { DueIndexService } from '../due-index/due-index.service';
import { Schedule, ScheduleDefinition, ScheduleStatus } from './schedule';
import { definitionColumns, toSchedule } from './schedule.mapper';
import { ScheduleEntity } from './schedule.entity';
import {
  CLAIM_IDEMPOTENCY_KEY,
  COUNT_LIVE_SCHEDULES,
  LOCK_SCHEDULE,
  LOCK_TENANT,
  PRUNE_IDEMPOTENCY_KEYS,
  READ_IDEMPOTENCY_KEY,
} from './schedules.sql';

export type CreateOutcome =
  | { kind: 'created'; schedule: Schedule }
  | { kind: 'replayed'; schedule: Schedule }
  | { kind: 'key_reused' }
  | { kind: 'quota_exceeded' };

export interface ScheduleChange {
  definition: ScheduleDefinition;
  status: ScheduleStatus;
  nextDueAt: Date | null;
}

export type UpdateOutcome =
  | { kind: 'updated'; schedule: Schedule }
  | { kind: 'not_found' }
  | { kind: 'stale'; current: number };

export interface ListPage {
  items: Schedule[];
  /** Id of the last item when there is a next page. */
  nextAfterId: string | null;
}

@Injectable()
export class SchedulesRepository {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly dueIndex: DueIndexService,
  ) {}

  /**
   * Creates the schedule and its due-index entry in one transaction, guarded by the tenant's
   * Idempotency-Key and its active-schedule quota. Nothing is written unless all of it is.
   */
  async create(input: {
    id: string;
    tenantId: string;
    idempotencyKey: string;
    requestSha256: Buffer;
    definition: ScheduleDefinition;
    nextDueAt: Date | null;
    maxActiveSchedules: number;
    /** Runs first inside the transaction (e.g. locking the target so it cannot be deleted). */
    guard: (em: EntityManager) => Promise<void>;
  }): Promise<CreateOutcome> {
    return this.dataSource
      .transaction(async (em): Promise<CreateOutcome> => {
        const claimed = await em.query(CLAIM_IDEMPOTENCY_KEY, [
          input.tenantId,
          input.idempotencyKey,
          input.requestSha256,
          input.id,
        ]);
        if (claimed.length === 0) {
          const [existing] = await em.query(READ_IDEMPOTENCY_KEY, [
            input.tenantId,
            input.idempotencyKey,
          ]);
          if (!Buffer.from(existing.request_sha256).equals(input.requestSha256))
            return { kind: 'key_reused' };
          const schedule = await this.findInManager(em, input.tenantId, existing.schedule_id);
          return schedule ? { kind: 'replayed', schedule } : { kind: 'key_reused' };
        }
        await input.guard(em);
        await em.query(LOCK_TENANT, [input.tenantId]);
        const [{ n }] = await em.query(COUNT_LIVE_SCHEDULES, [input.tenantId]);
        if (n >= input.maxActiveSchedules) {
          // Roll back the key too, so the client may retry the same request once it has room.
          throw new QuotaRollback();
        }
        const row = em.getRepository(ScheduleEntity).create({
          ...definitionColumns(input.definition),
          id: input.id,
          tenantId: input.tenantId,
          revision: 1,
          status: 'active',
          nextDueAt: input.nextDueAt,
        });
        await em.getRepository(ScheduleEntity).insert(row);
        if (input.nextDueAt) {
          await this.dueIndex.replace(em, {
            scheduleId: input.id,
            tenantId: input.tenantId,
            revision: 1,
            dueAt: input.nextDueAt,
          });
        }
        return {
          kind: 'created',
          schedule: (await this.findInManager(em, input.tenantId, input.id))!,
        };
      })
      .catch((error: unknown) => {
        if (error instanceof QuotaRollback) return { kind: 'quota_exceeded' } as const;
        throw error;
      });
  }

  async pruneIdempotencyKeys(limit: number): Promise<number> {
    return queryAffected(this.dataSource, PRUNE_IDEMPOTENCY_KEYS, [limit]);
  }

  async findById(tenantId: string, id: string): Promise<Schedule | null> {
    return this.findInManager(this.dataSource.manager, tenantId, id);
  }

  /** Keyset pagination by (created_at, id): stable under concurrent inserts, no OFFSET scans. */
  async list(
    tenantId: string,
    options: { status?: ScheduleStatus; limit: number; afterId?: string },
  ): Promise<ListPage> {
    const query = this.dataSource
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

  /**
   * Applies an edit only if the caller read the current revision (optimistic concurrency with
   * the row held FOR UPDATE), bumps the revision and rewrites the due-index entry for the new
   * revision, all in one transaction. `change` may throw a domain error to refuse the edit.
   */
  async update(
    tenantId: string,
    id: string,
    expectedRevision: number | null,
    change: (current: Schedule) => ScheduleChange,
    guard: (em: EntityManager) => Promise<void> = async () => undefined,
  ): Promise<UpdateOutcome> {
    return this.dataSource.transaction(async (em): Promise<UpdateOutcome> => {
      await guard(em);
      const locked = await em.query(LOCK_SCHEDULE, [tenantId, id]);
      if (locked.length === 0) return { kind: 'not_found' };
      const current = (await this.findInManager(em, tenantId, id))!;
      if (expectedRevision !== null && current.revision !== expectedRevision) {
        return { kind: 'stale', current: current.revision };
      }
      const next = change(current);
      const revision = current.revision + 1;
      await em.getRepository(ScheduleEntity).update(
        { id, tenantId, revision: current.revision },
        {
          ...definitionColumns(next.definition),
          status: next.status,
          nextDueAt: next.nextDueAt,
          revision,
          updatedAt: () => 'now()',
        },
      );
      if (next.nextDueAt && next.status === 'active') {
        await this.dueIndex.replace(em, {
          scheduleId: id,
          tenantId,
          revision,
          dueAt: next.nextDueAt,
        });
      } else {
        await this.dueIndex.remove(em, id);
      }
      return { kind: 'updated', schedule: (await this.findInManager(em, tenantId, id))! };
    });
  }

  private async findInManager(
    em: EntityManager,
    tenantId: string,
    id: string,
  ): Promise<Schedule | null> {
    const row = await em.getRepository(ScheduleEntity).findOneBy({ tenantId, id });
    return row ? toSchedule(row) : null;
  }
}

class QuotaRollback extends Error {}
