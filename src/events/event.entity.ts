import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { SubscriptionEntity } from '../subscriptions/subscription.entity';

/**
 * The event outbox: one row per (event, subscription), written in the transaction of the state
 * change that caused the event, so an event exists exactly when its change committed. `id` is
 * the event's (webhook-id), shared by the subscriptions that hear it. A pending row is due at
 * `next_attempt_at`; a delivery in flight moves it on by a lease, so a crashed deliverer's row
 * comes due again (at least once). `attempts` fences a delivery's report.
 */
@Entity({ name: 'events' })
@Index('events_due_idx', ['nextAttemptAt'], { where: `state = 'pending'` })
@Index('events_finished_idx', ['finishedAt'], { where: `state <> 'pending'` })
@Check('events_state_check', `state IN ('pending', 'delivered', 'given_up')`)
export class EventEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'events_pkey' })
  id: string;

  @PrimaryColumn({ name: 'subscription_id', type: 'uuid', primaryKeyConstraintName: 'events_pkey' })
  subscriptionId: string;

  @ManyToOne(() => SubscriptionEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'subscription_id', foreignKeyConstraintName: 'events_subscription_id_fkey' })
  subscription?: SubscriptionEntity;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** The subscription's target when the event was written. */
  @Column({ name: 'target_id', type: 'uuid' })
  targetId: string;

  @Column({ type: 'text' })
  type: string;

  /** What the event says (ids, states, reasons, instants): never a payload or a secret. */
  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ name: 'occurred_at', type: 'timestamptz', default: () => 'now()' })
  occurredAt: Date;

  @Column({ type: 'text', default: 'pending' })
  state: string;

  @Column({ type: 'integer', default: 0 })
  attempts: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt: Date;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
