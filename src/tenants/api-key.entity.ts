import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
} from 'typeorm';
import { TenantEntity } from './tenant.entity';

/** An API key is stored as (public key id, SHA-256 of its secret part); the key itself never. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ name: 'key_id', type: 'text', primaryKeyConstraintName: 'api_keys_pkey' })
  keyId: string;

  @Index('api_keys_tenant_id_idx')
  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'api_keys_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ name: 'secret_sha256', type: 'bytea' })
  secretSha256: Buffer;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}
