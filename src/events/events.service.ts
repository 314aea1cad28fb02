import { Injectable } from '@nestjs/common';
import type { Tx } from '../database';
import type { ClaimedEvent } from './event';
import { EventsRepository } from './events.repository';

/**
 * The event outbox: the record* methods write the events a state change causes, in the
 * transaction `tx` of that change (so an event exists exactly when its change committed), only
 * for the tenant's subscriptions of its type; the rest serves the deliverer.
 */
@Injectable()
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  /**
   * Runs whose change in `tx` ended them or recorded them SKIPPED (any others are ignored), one
   * statement for the whole batch.
   */
  async recordRunEvents(tx: Tx, runIds: readonly string[]): Promise<void> {
    if (runIds.length > 0) await this.events.recordRunEvents(tx, runIds);
  }

  /** The schedule the edit in `tx` paused (by request or auto-pause). */
  recordSchedulePaused(tx: Tx, tenantId: string, scheduleId: string): Promise<void> {
    return this.events.recordSchedulePaused(tx, tenantId, scheduleId);
  }

  /** The target `tx` disabled (a 410 Gone, or by request). */
  recordTargetDisabled(tx: Tx, tenantId: string, targetId: string): Promise<void> {
    return this.events.recordTargetDisabled(tx, tenantId, targetId);
  }

  /** Due deliveries, each claimed for one attempt under a lease (see CLAIM_DUE_EVENTS). */
  claimDue(limit: number, perTarget: number, leaseMs: number): Promise<ClaimedEvent[]> {
    return limit > 0 ? this.events.claimDue(limit, perTarget, leaseMs) : Promise.resolve([]);
  }

  delivered(event: ClaimedEvent): Promise<boolean> {
    return this.events.endAttempt(event, 'delivered', null, null);
  }

  /** A failed attempt: due again in `retryInMs`, or given up when that is null. */
  failed(event: ClaimedEvent, error: string, retryInMs: number | null): Promise<boolean> {
    const state = retryInMs === null ? 'given_up' : 'pending';
    return this.events.endAttempt(event, state, retryInMs, error.slice(0, 1000));
  }

  pruneFinished(olderThanSeconds: number, limit: number): Promise<number> {
    return this.events.pruneFinished(olderThanSeconds, limit);
  }
}
