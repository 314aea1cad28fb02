import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The due-time index: a hint, not the truth. Pollers scan it by (due_at, shard) in bounded
 * ranges of the shards they hold; an entry is found by its schedule (the key leads with it: the
 * delete of claimed entries, every removal), and an entry whose revision is no longer its
 * schedule's is ignored and dropped.
 */
@Entity({ name: 'due_index' })
@Index('due_index_by_instant_idx', ['dueAt', 'shard'])
export class DueIndexEntity {
  @PrimaryColumn({ name: 'schedule_id', type: 'uuid', primaryKeyConstraintName: 'due_index_pkey' })
  scheduleId: string;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'due_index_pkey' })
  shard: number;

  @PrimaryColumn({
    name: 'due_at',
    type: 'timestamptz',
    primaryKeyConstraintName: 'due_index_pkey',
  })
  dueAt: Date;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** The schedule revision this entry was computed for. */
  @Column({ type: 'integer' })
  revision: number;
}
