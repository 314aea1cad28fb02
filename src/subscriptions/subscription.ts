import type { EventType } from './event-type';

/** A tenant's subscription: the events of these types go to this target of the tenant. */
export interface Subscription {
  id: string;
  tenantId: string;
  targetId: string;
  eventTypes: EventType[];
  createdAt: Date;
}

export interface SubscriptionPage {
  items: Subscription[];
  nextAfterId: string | null;
}

/** At most this many subscriptions per tenant (each event is one row per subscription). */
export const MAX_SUBSCRIPTIONS_PER_TENANT = 20;
