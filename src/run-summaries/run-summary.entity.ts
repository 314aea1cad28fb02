import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ScheduleEntity } from '../schedules/schedule.entity';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * What outlives a slice of a schedule's runs: per UTC day of `scheduled_at`, summarised slice
 * (`slice_from`, the start of the range it came from) and (state, reason), the counts and the
 * due-to-start lag. Written once per slice by SUMMARISE_RANGE, never updated.
 */
@Entity({ name: 'run_summaries' })
@Index('run_summaries_schedule_day_idx', ['scheduleId', 'day'])
@Check('run_summaries_histogram_check', 'cardinality(lag_buckets) = cardinality(lag_bucket_counts)')
export class RunSummaryEntity {
  @PrimaryGeneratedColumn('identity', {
    type: 'bigint',
    generatedIdentity: 'BY DEFAULT',
    primaryKeyConstraintName: 'run_summaries_pkey',
  })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'run_summaries_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId: string;

  @ManyToOne(() => ScheduleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_id', foreignKeyConstraintName: 'run_summaries_schedule_id_fkey' })
  schedule?: ScheduleEntity;

  /** The UTC day of the runs' scheduled_at. */
  @Column({ type: 'date' })
  day: string;

  @Column({ name: 'slice_from', type: 'timestamptz' })
  sliceFrom: Date;

  @Column({ type: 'text' })
  state: string;

  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ type: 'integer' })
  runs: number;

  @Column({ type: 'integer' })
  attempts: number;

  /** Runs with a measured lag (a first attempt, started by the poller's or a manual run). */
  @Column({ name: 'lag_count', type: 'integer' })
  lagCount: number;

  @Column({ name: 'lag_p50_ms', type: 'bigint', nullable: true })
  lagP50Ms: string | null;

  @Column({ name: 'lag_p99_ms', type: 'bigint', nullable: true })
  lagP99Ms: string | null;

  @Column({ name: 'lag_max_ms', type: 'bigint', nullable: true })
  lagMaxMs: string | null;

  /** Sparse log-scale histogram of the lags: bucket numbers (lag-histogram.ts) … */
  @Column({ name: 'lag_buckets', type: 'smallint', array: true })
  lagBuckets: number[];

  /** … and how many lags fell in each. */
  @Column({ name: 'lag_bucket_counts', type: 'integer', array: true })
  lagBucketCounts: number[];
}
