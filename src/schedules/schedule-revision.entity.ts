import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { ScheduleEntity } from './schedule.entity';

/**
 * Every revision of a schedule, kept: who changed it (an API key's public id, never the key),
 * when, what changed and the whole definition it left. Written in the transaction of the change,
 * so a revision a run names always has its row.
 */
@Entity({ name: 'schedule_revisions' })
@Index('schedule_revisions_schedule_revision_key', ['scheduleId', 'revision'], { unique: true })
@Check(
  'schedule_revisions_change_check',
  `change IN ('created', 'edited', 'paused', 'resumed', 'cancelled', 'auto_paused', 'recorded')`,
)
export class ScheduleRevisionEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'schedule_revisions_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId: string;

  @ManyToOne(() => ScheduleEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'schedule_id',
    foreignKeyConstraintName: 'schedule_revisions_schedule_id_fkey',
  })
  schedule?: ScheduleEntity;

  @Column({ type: 'integer' })
  revision: number;

  @Column({ type: 'text' })
  change: string;

  /** api_keys.key_id of the caller; null when dueline made the change. */
  @Column({ name: 'changed_by_key_id', type: 'text', nullable: true })
  changedByKeyId: string | null;

  @Column({ name: 'changed_at', type: 'timestamptz', default: () => 'now()' })
  changedAt: Date;

  @Column({ type: 'jsonb', default: () => `'[]'` })
  changes: object;

  @Column({ type: 'jsonb' })
  definition: object;

  @Column({ type: 'text', nullable: true })
  note: string | null;
}
