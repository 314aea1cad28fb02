import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { TargetEntity } from '../targets/target.entity';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * A tenant's event subscription: an existing target of the same tenant and a non-empty set of
 * event types (the database checks both the set and that every type is known). The recording
 * statements join against it by tenant, so a tenant without subscriptions pays an index probe.
 */
@Entity({ name: 'subscriptions' })
@Index('subscriptions_tenant_idx', ['tenantId', 'createdAt', 'id'])
@Check(
  'subscriptions_event_types_check',
  `cardinality(event_types) > 0 AND event_types <@ ARRAY['run.failed', 'run.unknown', 'run.succeeded', 'run.late', 'occurrence.skipped', 'schedule.paused', 'target.disabled']::text[]`,
)
export class SubscriptionEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'subscriptions_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'subscriptions_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ name: 'target_id', type: 'uuid' })
  targetId: string;

  @ManyToOne(() => TargetEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'target_id', foreignKeyConstraintName: 'subscriptions_target_id_fkey' })
  target?: TargetEntity;

  @Column({ name: 'event_types', type: 'text', array: true })
  eventTypes: string[];

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
