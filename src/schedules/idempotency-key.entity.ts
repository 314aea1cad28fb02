import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * One row per (tenant, Idempotency-Key) of POST /schedules. The primary key is what makes two
 * concurrent requests with one key create one schedule; the stored answer is what a replay gets.
 */
@Entity({ name: 'idempotency_keys' })
@Index('idempotency_keys_created_at_idx', ['createdAt'])
export class IdempotencyKeyEntity {
  @PrimaryColumn({
    name: 'tenant_id',
    type: 'uuid',
    primaryKeyConstraintName: 'idempotency_keys_pkey',
  })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'idempotency_keys_tenant_id_fkey' })
  tenant?: TenantEntity;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'idempotency_keys_pkey' })
  key: string;

  /** SHA-256 of the canonical request body: the same key with another body is refused. */
  @Column({ name: 'request_sha256', type: 'bytea' })
  requestSha256: Buffer;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId: string;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
