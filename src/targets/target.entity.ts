import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { TenantEntity } from '../tenants/tenant.entity';

@Entity({ name: 'targets' })
// Names identify targets to people, so they are unique per tenant; a deleted target frees its name.
@Index('targets_tenant_id_name_key', ['tenantId', 'name'], {
  unique: true,
  where: '(deleted_at IS NULL)',
})
@Index('targets_tenant_listing_idx', ['tenantId', 'createdAt', 'id'], {
  where: '(deleted_at IS NULL)',
})
// Redundant as a uniqueness rule (id is the key), but lets schedules reference
// targets(tenant_id, id), so "a schedule names a target of its own tenant" is a constraint.
@Unique('targets_tenant_id_id_key', ['tenantId', 'id'])
@Check('targets_kind_check', `kind IN ('http')`)
@Check('targets_method_check', `method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')`)
@Check('targets_timeout_ms_check', `timeout_ms BETWEEN 1000 AND 60000`)
@Check('targets_headers_check', `jsonb_typeof(headers) = 'object'`)
// A rotated-out secret signs only for the overlap its rotation chose: it never lingers undated.
@Check(
  'targets_previous_secret_check',
  `(previous_signing_secret IS NULL) = (previous_signing_secret_expires_at IS NULL)`,
)
// The auth block and the view reads show of it are written together.
@Check('targets_auth_check', `(auth IS NULL) = (auth_view IS NULL)`)
// The relay drops rotated-out secrets once their overlap ends.
@Index('targets_previous_secret_expiry_idx', ['previousSigningSecretExpiresAt'], {
  where: '(previous_signing_secret_expires_at IS NOT NULL)',
})
export class TargetEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'targets_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'targets_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: 'http' })
  kind: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', default: 'POST' })
  method: string;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  headers: Record<string, string>;

  @Column({ name: 'timeout_ms', type: 'integer', default: 10000 })
  timeoutMs: number;

  @Column({ type: 'boolean', default: false })
  deduplicates: boolean;

  /**
   * Sealed with AES-256-GCM under SECRETS_KEY (src/secrets): it must be readable to sign
   * requests, so it cannot be hashed. Never selected except for dispatch (and a key rotation);
   * never logged or returned.
   */
  @Column({ name: 'signing_secret', type: 'text', nullable: true })
  signingSecret: string | null;

  /** The secret a rotation replaced (sealed): it keeps signing beside the new one until it expires. */
  @Column({ name: 'previous_signing_secret', type: 'text', nullable: true })
  previousSigningSecret: string | null;

  @Column({ name: 'previous_signing_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSigningSecretExpiresAt: Date | null;

  /** How dueline authenticates to the target, sealed (credentials included). */
  @Column({ type: 'text', nullable: true })
  auth: string | null;

  /** The same block without its secrets: what reads show. */
  @Column({ name: 'auth_view', type: 'jsonb', nullable: true })
  authView: object | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** Soft delete: history (runs, attempts) may still point at the target. */
  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}
