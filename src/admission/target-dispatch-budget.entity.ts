import { Column, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { TargetEntity } from '../targets/target.entity';

/**
 * A token bucket per target with a ratePerSecond, in the database so every replica draws from
 * the same one: ratePerSecond tokens per second, at most one second's worth banked. Spent, like
 * the tenant's, when a run of the target is admitted.
 */
@Entity({ name: 'target_dispatch_budget' })
export class TargetDispatchBudgetEntity {
  @PrimaryColumn({
    name: 'target_id',
    type: 'uuid',
    primaryKeyConstraintName: 'target_dispatch_budget_pkey',
  })
  targetId: string;

  @OneToOne(() => TargetEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'target_id',
    foreignKeyConstraintName: 'target_dispatch_budget_target_id_fkey',
  })
  target?: TargetEntity;

  @Column({ type: 'double precision' })
  tokens: number;

  @Column({ name: 'refilled_at', type: 'timestamptz' })
  refilledAt: Date;
}
