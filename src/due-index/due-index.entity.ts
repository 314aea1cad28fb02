import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * The due-time index: a hint, not the truth. Pollers scan it by (shard, due_at) in bounded
 * ranges, and a backlog across shards by (due_at, shard); an entry whose revision is no longer
 * its schedule's is ignored and dropped.
 */
@Entity({ name: 'due_index' })
@Index('due_index_schedule_id_idx', ['scheduleId'])
@Index('due_index_by_instant_idx', ['dueAt', 'shard'])
export class DueIndexEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'due_index_pkey' })
  shard: number;

  @PrimaryColumn({
    name: 'due_at',
    type: 'timestamptz',
    primaryKeyConstraintName: 'due_index_pkey',
  })
  dueAt: Date;

  @PrimaryColumn({ name: 'schedule_id', type: 'uuid', primaryKeyConstraintName: 'due_index_pkey' })
  scheduleId: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** The schedule revision this entry was computed for. */
  @Column({ type: 'integer' })
  revision: number;
}
