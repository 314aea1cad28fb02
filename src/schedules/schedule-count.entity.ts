import { Check, Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * How many of a tenant's schedules are live (active or paused), kept in the transaction of every
 * transition into or out of those statuses, so maxActiveSchedules is checked against one row
 * instead of a count of the tenant's schedules (see schedule-quota.sql.ts).
 */
@Entity({ name: 'tenant_schedule_counts' })
@Check('tenant_schedule_counts_live_check', 'live >= 0')
export class TenantScheduleCountEntity {
  @PrimaryColumn({
    name: 'tenant_id',
    type: 'uuid',
    primaryKeyConstraintName: 'tenant_schedule_counts_pkey',
  })
  tenantId: string;

  @OneToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'tenant_id',
    foreignKeyConstraintName: 'tenant_schedule_counts_tenant_id_fkey',
  })
  tenant?: TenantEntity;

  @Column({ type: 'integer', default: 0 })
  live: number;
}
