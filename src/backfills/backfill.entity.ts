import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ScheduleEntity } from '../schedules/schedule.entity';

/**
 * A backfill of a schedule's past instants: its request, the plan it took (the instants it is to
 * run are its items), its progress, and the Idempotency-Key it was created with.
 */
@Entity({ name: 'backfills' })
@Index('backfills_tenant_key', ['tenantId', 'idempotencyKey'], { unique: true })
@Index('backfills_running_idx', ['createdAt'], { where: `status = 'running'` })
@Check('backfills_status_check', `status IN ('running', 'completed', 'cancelled')`)
@Check('backfills_reprocess_check', `reprocess IN ('missing', 'failed', 'all')`)
@Check('backfills_order_check', `run_order IN ('oldest', 'newest')`)
export class BackfillEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'backfills_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId: string;

  @ManyToOne(() => ScheduleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'schedule_id', foreignKeyConstraintName: 'backfills_schedule_id_fkey' })
  schedule?: ScheduleEntity;

  @Column({ name: 'idempotency_key', type: 'text' })
  idempotencyKey: string;

  @Column({ name: 'request_sha256', type: 'bytea' })
  requestSha256: Buffer;

  @Column({ name: 'from_at', type: 'timestamptz' })
  fromAt: Date;

  @Column({ name: 'to_at', type: 'timestamptz' })
  toAt: Date;

  @Column({ type: 'text' })
  reprocess: string;

  @Column({ name: 'overlap_policy', type: 'text' })
  overlapPolicy: string;

  @Column({ name: 'max_concurrent', type: 'integer' })
  maxConcurrent: number;

  @Column({ name: 'run_order', type: 'text' })
  runOrder: string;

  @Column({ type: 'text', default: 'running' })
  status: string;

  /** Instants of the range by planned action. */
  @Column({ type: 'jsonb' })
  plan: object;

  @Column({ type: 'integer' })
  total: number;

  @Column({ type: 'integer', default: 0 })
  processed: number;

  @Column({ type: 'integer', default: 0 })
  created: number;

  @Column({ type: 'integer', default: 0 })
  skipped: number;

  @Column({ name: 'requested_by_key_id', type: 'text', nullable: true })
  requestedByKeyId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

/** One instant a backfill is to run, in its order; outcome null until its turn came. */
@Entity({ name: 'backfill_instants' })
@Check(
  'backfill_instants_outcome_check',
  `outcome IS NULL OR outcome IN ('created', 'skip_existing', 'skip_active', 'skipped_overlap', 'cancelled')`,
)
export class BackfillInstantEntity {
  @PrimaryColumn({
    name: 'backfill_id',
    type: 'uuid',
    primaryKeyConstraintName: 'backfill_instants_pkey',
  })
  backfillId: string;

  @ManyToOne(() => BackfillEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'backfill_id',
    foreignKeyConstraintName: 'backfill_instants_backfill_id_fkey',
  })
  backfill?: BackfillEntity;

  @PrimaryColumn({ type: 'integer', primaryKeyConstraintName: 'backfill_instants_pkey' })
  position: number;

  @Column({ name: 'scheduled_at', type: 'timestamptz' })
  scheduledAt: Date;

  @Column({ name: 'scheduled_local', type: 'text' })
  scheduledLocal: string;

  @Column({ type: 'text', nullable: true })
  outcome: string | null;

  @Column({ name: 'run_id', type: 'uuid', nullable: true })
  runId: string | null;
}
