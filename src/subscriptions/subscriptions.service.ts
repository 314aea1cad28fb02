import { Injectable } from '@nestjs/common';
import { isUuid, NotFoundError, pageSize, QuotaExceededError, ValidationError } from '../common';
import { EVENT_TYPES, isEventType, type EventType } from './event-type';
import {
  MAX_SUBSCRIPTIONS_PER_TENANT,
  type Subscription,
  type SubscriptionPage,
} from './subscription';
import { SubscriptionsRepository } from './subscriptions.repository';

@Injectable()
export class SubscriptionsService {
  constructor(private readonly subscriptions: SubscriptionsRepository) {}

  /** A subscription of an existing target of the tenant to a non-empty set of event types. */
  async create(
    tenantId: string,
    targetId: string,
    eventTypes: readonly string[],
  ): Promise<Subscription> {
    const unknown = eventTypes.find((type) => !isEventType(type));
    if (eventTypes.length === 0 || unknown !== undefined) {
      const message =
        unknown === undefined
          ? 'at least one event type'
          : `"${String(unknown).slice(0, 40)}" is not an event type (${EVENT_TYPES.join(', ')})`;
      throw new ValidationError('the subscription is invalid', [{ field: 'eventTypes', message }]);
    }
    const types = [...new Set(eventTypes as EventType[])];
    if (!isUuid(targetId)) throw new NotFoundError('target', targetId.slice(0, 64));
    const outcome = await this.subscriptions.insert(
      tenantId,
      targetId,
      types,
      MAX_SUBSCRIPTIONS_PER_TENANT,
    );
    switch (outcome.kind) {
      case 'created':
        return outcome.subscription;
      case 'target_not_found':
        throw new NotFoundError('target', targetId);
      case 'limit_reached':
        throw new QuotaExceededError('subscriptions', MAX_SUBSCRIPTIONS_PER_TENANT);
    }
  }

  async get(tenantId: string, id: string): Promise<Subscription> {
    const subscription = isUuid(id) ? await this.subscriptions.findById(tenantId, id) : null;
    if (!subscription) throw new NotFoundError('subscription', id);
    return subscription;
  }

  async list(
    tenantId: string,
    page: { limit?: number; afterId?: string },
  ): Promise<SubscriptionPage> {
    const limit = pageSize(page.limit);
    const rows = await this.subscriptions.list(tenantId, limit + 1, page.afterId ?? null);
    const items = rows.slice(0, limit);
    return { items, nextAfterId: rows.length > limit ? items[items.length - 1].id : null };
  }

  /** Deletes it; the events not yet delivered to it are dropped with it. */
  async delete(tenantId: string, id: string): Promise<void> {
    if (!isUuid(id) || !(await this.subscriptions.delete(tenantId, id))) {
      throw new NotFoundError('subscription', id);
    }
  }
}
