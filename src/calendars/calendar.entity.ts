import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * A tenant's named list of local dates on which its schedules do not run (holidays). Never
 * changed once written: a schedule that names it copies its dates, and that copy is exact
 * because the calendar cannot move under it. A new list is a new calendar.
 */
@Entity({ name: 'calendars' })
@Index('calendars_tenant_name_key', ['tenantId', 'name'], { unique: true })
export class CalendarEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'calendars_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'calendars_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ type: 'text' })
  name: string;

  /** Local dates, YYYY-MM-DD, sorted and distinct. */
  @Column({ type: 'jsonb' })
  dates: string[];

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
