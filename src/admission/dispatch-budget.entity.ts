import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * A token bucket per tenant, in the database so every worker replica draws from the same one:
 * dispatchRatePerSecond tokens per second, at most one second's worth banked.
 */
@Entity({ name: 'tenant_dispatch_budget' })
export class DispatchBudgetEntity {
  @PrimaryColumn({
    name: 'tenant_id',
    type: 'uuid',
    primaryKeyConstraintName: 'tenant_dispatch_budget_pkey',
  })
  tenantId: string;

  @OneToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'tenant_id',
    foreignKeyConstraintName: 'tenant_dispatch_budget_tenant_id_fkey',
  })
  tenant?: TenantEntity;

  @Column({ type: 'double precision' })
  tokens: number;

  @Column({ name: 'refilled_at', type: 'timestamptz' })
  refilledAt: Date;
}
