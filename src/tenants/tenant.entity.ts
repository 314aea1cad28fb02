import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity({ name: 'tenants' })
@Check('tenants_weight_check', 'weight BETWEEN 1 AND 1000')
@Check('tenants_history_retention_days_check', 'history_retention_days BETWEEN 1 AND 400')
export class TenantEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'tenants_pkey' })
  id: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'max_active_schedules', type: 'integer' })
  maxActiveSchedules: number;

  @Column({ name: 'dispatch_rate_per_second', type: 'integer' })
  dispatchRatePerSecond: number;

  @Column({ name: 'max_concurrent_runs', type: 'integer' })
  maxConcurrentRuns: number;

  @Column({ type: 'integer', default: 1 })
  weight: number;

  /** Days its runs and attempts are kept as rows; older ones live on as run summaries. */
  @Column({ name: 'history_retention_days', type: 'integer', default: 7 })
  historyRetentionDays: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
