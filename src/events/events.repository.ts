import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';
import type { EventType } from '../subscriptions';
import type { ClaimedEvent, EventDeliveryState } from './event';
import {
  CLAIM_DUE_EVENTS,
  END_EVENT_ATTEMPT,
  PRUNE_FINISHED_EVENTS,
  RECORD_RUN_EVENTS,
  RECORD_SCHEDULE_PAUSED,
  RECORD_TARGET_DISABLED,
} from './events.sql';

@Injectable()
export class EventsRepository {
  constructor(private readonly sql: SqlRunner) {}

  async recordRunEvents(tx: Tx, runIds: readonly string[]): Promise<void> {
    await this.sql.rows(RECORD_RUN_EVENTS, [runIds], tx);
  }

  async recordSchedulePaused(tx: Tx, tenantId: string, scheduleId: string): Promise<void> {
    await this.sql.rows(RECORD_SCHEDULE_PAUSED, [tenantId, scheduleId], tx);
  }

  async recordTargetDisabled(tx: Tx, tenantId: string, targetId: string): Promise<void> {
    await this.sql.rows(RECORD_TARGET_DISABLED, [tenantId, targetId], tx);
  }

  async claimDue(limit: number, perTarget: number, leaseMs: number): Promise<ClaimedEvent[]> {
    const rows = await this.sql.rows(CLAIM_DUE_EVENTS, [limit, perTarget, leaseMs]);
    return rows.map((row) => ({
      id: row.id as string,
      subscriptionId: row.subscription_id as string,
      tenantId: row.tenant_id as string,
      targetId: row.target_id as string,
      type: row.type as EventType,
      data: row.data as Record<string, unknown>,
      occurredAt: row.occurred_at as Date,
      attempt: row.attempts as number,
    }));
  }

  /** True when the report was written (the attempt still held its fence). */
  async endAttempt(
    event: ClaimedEvent,
    state: EventDeliveryState,
    retryInMs: number | null,
    error: string | null,
  ): Promise<boolean> {
    const params = [event.id, event.subscriptionId, event.attempt, state, retryInMs, error];
    return (await this.sql.affected(END_EVENT_ATTEMPT, params)) > 0;
  }

  async pruneFinished(olderThanSeconds: number, limit: number): Promise<number> {
    return this.sql.affected(PRUNE_FINISHED_EVENTS, [olderThanSeconds, limit]);
  }
}
