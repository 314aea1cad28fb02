import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The keys dueline signs its OIDC-style JWTs for targets with. Service-wide, not per tenant:
 * there is one issuer, and receivers verify against one JWKS (/.well-known/jwks.json).
 */
@Entity({ name: 'signing_keys' })
@Index('signing_keys_activates_at_idx', ['activatesAt'])
export class SigningKeyEntity {
  /** The JWK `kid`. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'signing_keys_pkey' })
  kid: string;

  @Column({ type: 'text' })
  algorithm: string;

  /** PKCS#8 PEM, sealed under SECRETS_KEY (src/secrets). */
  @Column({ name: 'private_key', type: 'text' })
  privateKey: string;

  @Column({ name: 'public_jwk', type: 'jsonb' })
  publicJwk: object;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  /** Published in the JWKS from creation; signs only from here on. */
  @Column({ name: 'activates_at', type: 'timestamptz' })
  activatesAt: Date;

  /** Leaves the JWKS (and stops signing) here: once tokens it signed have all expired. */
  @Column({ name: 'retires_at', type: 'timestamptz', nullable: true })
  retiresAt: Date | null;
}
