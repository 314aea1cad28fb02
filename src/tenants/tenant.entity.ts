import {
  Column,
  CreateDateColumn,
  Entity,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

@Entity({ name: 'tenants' })
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

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
