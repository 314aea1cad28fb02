import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One row per logical shard (0..127): who owns it, until when, and under which epoch. */
@Entity({ name: 'shard_leases' })
export class ShardLeaseEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'shard_leases_pkey' })
  shard: number;

  @Column({ type: 'text', nullable: true })
  owner: string | null;

  /** Raised whenever the shard changes hands. */
  @Column({ type: 'bigint', default: 0 })
  epoch: string;

  @Column({ name: 'expires_at', type: 'timestamptz', default: () => `'-infinity'` })
  expiresAt: Date;
}
