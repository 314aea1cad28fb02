import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * A tenant's projected runs per recurring UTC minute: `minute` (slot 0: in every minute),
 * `hour` (slot = minute of the hour) and `day` (slot = minute of the day), the sums of its
 * schedules' contributions (see load-contribution.ts). At most 1,501 rows per tenant.
 */
@Entity({ name: 'tenant_load_profile' })
@Check('tenant_load_profile_period_check', `period IN ('minute', 'hour', 'day')`)
@Check('tenant_load_profile_runs_check', 'runs >= 0')
export class TenantLoadProfileEntity {
  @PrimaryColumn({
    name: 'tenant_id',
    type: 'uuid',
    primaryKeyConstraintName: 'tenant_load_profile_pkey',
  })
  tenantId: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'tenant_load_profile_pkey' })
  period: string;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'tenant_load_profile_pkey' })
  slot: number;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'tenant_load_profile_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ type: 'integer' })
  runs: number;
}

/** A tenant's one-time runs per UTC minute (the minute's start). Past minutes are pruned. */
@Entity({ name: 'tenant_load_instants' })
@Check('tenant_load_instants_runs_check', 'runs >= 0')
export class TenantLoadInstantEntity {
  @PrimaryColumn({
    name: 'tenant_id',
    type: 'uuid',
    primaryKeyConstraintName: 'tenant_load_instants_pkey',
  })
  tenantId: string;

  @PrimaryColumn({ type: 'timestamptz', primaryKeyConstraintName: 'tenant_load_instants_pkey' })
  minute: Date;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'tenant_id',
    foreignKeyConstraintName: 'tenant_load_instants_tenant_id_fkey',
  })
  tenant?: TenantEntity;

  @Column({ type: 'integer' })
  runs: number;
}

/**
 * What each schedule added to its tenant's profile, so that an edit, a pause or the end takes
 * back exactly that (whatever the zone's offset has become since). No row: it adds nothing.
 */
@Entity({ name: 'schedule_load' })
export class ScheduleLoadEntity {
  @PrimaryColumn({
    name: 'schedule_id',
    type: 'uuid',
    primaryKeyConstraintName: 'schedule_load_pkey',
  })
  scheduleId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ type: 'jsonb' })
  contribution: unknown;
}
