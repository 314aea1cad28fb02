import type { EventType } from '../subscriptions';

/** Where an event's delivery to one subscription stands. */
export const EVENT_DELIVERY_STATES = ['pending', 'delivered', 'given_up'] as const;
export type EventDeliveryState = (typeof EVENT_DELIVERY_STATES)[number];

/** A pending event claimed for one delivery attempt (its lease runs). */
export interface ClaimedEvent {
  id: string;
  subscriptionId: string;
  tenantId: string;
  targetId: string;
  type: EventType;
  data: Record<string, unknown>;
  occurredAt: Date;
  /** This attempt's number: it fences the attempt's report. */
  attempt: number;
}
