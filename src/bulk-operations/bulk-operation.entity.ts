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
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * A bulk replay or cancel over a fixed selection of runs, with its progress. The selection is
 * taken once, when it is created (its items), so the counts mean what they say.
 */
@Entity({ name: 'bulk_operations' })
@Check('bulk_operations_kind_check', `kind IN ('replay', 'cancel')`)
@Check('bulk_operations_status_check', `status IN ('running', 'completed')`)
@Index('bulk_operations_running_idx', ['leaseUntil'], { where: `status = 'running'` })
export class BulkOperationEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'bulk_operations_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'bulk_operations_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ type: 'text' })
  kind: string;

  @Column({ type: 'text', default: 'running' })
  status: string;

  @Column({ type: 'integer' })
  total: number;

  @Column({ type: 'integer', default: 0 })
  processed: number;

  @Column({ type: 'integer', default: 0 })
  succeeded: number;

  @Column({ type: 'integer', default: 0 })
  skipped: number;

  @Column({ name: 'requested_by_key_id', type: 'text', nullable: true })
  requestedByKeyId: string | null;

  /** Who is processing it, until when: a replica that died leaves it to the relay. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}

/** One selected run of a bulk operation; outcome null until it is processed. */
@Entity({ name: 'bulk_operation_items' })
@Check(
  'bulk_operation_items_outcome_check',
  `outcome IS NULL OR outcome IN ('replayed', 'already_replayed', 'not_replayable', 'schedule_cancelled', 'cancelled', 'cancel_requested', 'already_final')`,
)
@Index('bulk_operation_items_position_key', ['operationId', 'position'], { unique: true })
export class BulkOperationItemEntity {
  @PrimaryColumn({
    name: 'operation_id',
    type: 'uuid',
    primaryKeyConstraintName: 'bulk_operation_items_pkey',
  })
  operationId: string;

  @ManyToOne(() => BulkOperationEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'operation_id',
    foreignKeyConstraintName: 'bulk_operation_items_operation_id_fkey',
  })
  operation?: BulkOperationEntity;

  @PrimaryColumn({
    name: 'run_id',
    type: 'uuid',
    primaryKeyConstraintName: 'bulk_operation_items_pkey',
  })
  runId: string;

  /** The selection's order (the runs' (scheduled_at, id)): processed in this order. */
  @Column({ type: 'integer' })
  position: number;

  @Column({ type: 'text', nullable: true })
  outcome: string | null;

  @Column({ name: 'result_run_id', type: 'uuid', nullable: true })
  resultRunId: string | null;
}
