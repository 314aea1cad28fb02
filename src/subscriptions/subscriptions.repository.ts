import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row } from '../database';
import type { EventType } from './event-type';
import type { Subscription } from './subscription';
import { SubscriptionEntity } from './subscription.entity';
import {
  DELETE_SUBSCRIPTION,
  INSERT_SUBSCRIPTION,
  LOCK_TENANT_SUBSCRIPTIONS,
} from './subscriptions.sql';

export type InsertOutcome =
  | { kind: 'created'; subscription: Subscription }
  | { kind: 'target_not_found' }
  | { kind: 'limit_reached' };

@Injectable()
export class SubscriptionsRepository {
  constructor(private readonly sql: SqlRunner) {}

  /** See INSERT_SUBSCRIPTION; under the tenant's subscriptions lock. */
  insert(
    tenantId: string,
    targetId: string,
    eventTypes: readonly EventType[],
    limit: number,
  ): Promise<InsertOutcome> {
    return this.sql.transaction(async (tx) => {
      await this.sql.rows(LOCK_TENANT_SUBSCRIPTIONS, [tenantId], tx);
      const [row] = await this.sql.rows(
        INSERT_SUBSCRIPTION,
        [tenantId, targetId, eventTypes, limit],
        tx,
      );
      if (row.id) return { kind: 'created', subscription: fromRow(row) };
      return row.target_ok ? { kind: 'limit_reached' } : { kind: 'target_not_found' };
    });
  }

  async findById(tenantId: string, id: string): Promise<Subscription | null> {
    const row = await this.sql
      .manager()
      .getRepository(SubscriptionEntity)
      .findOneBy({ tenantId, id });
    return row ? toSubscription(row) : null;
  }

  /** Keyset pagination by (created_at, id), as every list. */
  async list(tenantId: string, limit: number, afterId: string | null): Promise<Subscription[]> {
    const query = this.sql
      .manager()
      .getRepository(SubscriptionEntity)
      .createQueryBuilder('s')
      .where('s.tenant_id = :tenantId', { tenantId })
      .orderBy('s.created_at', 'ASC')
      .addOrderBy('s.id', 'ASC')
      .limit(limit);
    if (afterId) {
      query.andWhere(
        '(s.created_at, s.id) > (SELECT p.created_at, p.id FROM subscriptions p WHERE p.tenant_id = :tenantId AND p.id = :afterId)',
        { afterId },
      );
    }
    return (await query.getMany()).map(toSubscription);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    return (await this.sql.affected(DELETE_SUBSCRIPTION, [id, tenantId])) > 0;
  }
}

function fromRow(row: Row): Subscription {
  return {
    id: row.id as string,
    tenantId: row.tenant_id as string,
    targetId: row.target_id as string,
    eventTypes: row.event_types as EventType[],
    createdAt: row.created_at as Date,
  };
}

function toSubscription(row: SubscriptionEntity): Subscription {
  return {
    id: row.id,
    tenantId: row.tenantId,
    targetId: row.targetId,
    eventTypes: row.eventTypes as EventType[],
    createdAt: row.createdAt,
  };
}
