import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';
import { RUN_REASON_CODES } from '../run-vocabulary';
import { ScheduleEntity } from '../schedules/schedule.entity';
import { TenantEntity } from '../tenants/tenant.entity';

/**
 * An occurrence (a run): one row per (schedule, revision, due instant), created once by a
 * unique insert. Its state changes only under the current fencing token.
 *
 * The table is range-partitioned by `scheduled_at` (migration PartitionedHistory; TypeORM
 * cannot declare partitioning, so the layout lives only in the migration and the partitions are
 * created and dropped by `history/`). That is why the key is (id, scheduled_at): every unique
 * index of a partitioned table contains its partition key.
 */
@Entity({ name: 'occurrences' })
@Check(
  'occurrences_state_check',
  `state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT', 'SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED', 'UNKNOWN')`,
)
@Check(
  'occurrences_reason_check',
  `reason IS NULL OR reason IN (${RUN_REASON_CODES.map((code) => `'${code}'`).join(', ')})`,
)
@Unique('occurrences_identity_key', ['scheduleId', 'scheduledAt', 'revision', 'originKey'])
@Index('occurrences_tenant_search_idx', ['tenantId', 'scheduledAt', 'id'])
@Index('occurrences_failed_recent_idx', ['finishedAt'], {
  where: `state IN ('FAILED', 'UNKNOWN')`,
})
@Index('occurrences_active_by_schedule_idx', ['scheduleId'], {
  where: `state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`,
})
@Index('occurrences_lease_idx', ['leaseUntil'], { where: `state = 'RUNNING'` })
@Index('occurrences_retry_idx', ['nextAttemptAt'], { where: `state = 'RETRY_WAIT'` })
@Index('occurrences_queued_idx', ['createdAt'], {
  where: `state = 'QUEUED' AND admitted_at IS NOT NULL`,
})
@Index('occurrences_waiting_admission_idx', ['tenantId', 'priority', 'scheduledAt', 'id'], {
  where: `state = 'QUEUED' AND admitted_at IS NULL AND reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')`,
})
@Index('occurrences_waiting_deadline_idx', ['startDeadline'], {
  where: `state = 'QUEUED' AND admitted_at IS NULL AND start_deadline IS NOT NULL`,
})
@Index('occurrences_holding_idx', ['tenantId', 'targetId'], {
  where: `state = 'RUNNING' OR (state = 'QUEUED' AND admitted_at IS NOT NULL)`,
})
@Index(
  'occurrences_waiting_target_idx',
  ['tenantId', 'targetId', 'priority', 'scheduledAt', 'id'],
  {
    where: `state = 'QUEUED' AND admitted_at IS NULL AND reason IN ('throttled_target', 'target_backoff')`,
  },
)
@Check('occurrences_priority_check', `priority BETWEEN 0 AND 2`)
export class OccurrenceEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'occurrences_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  // No foreign key (migration RunsWithoutParentKeys): one would make every partition drop wait
  // for schedule writers; a run is only ever written for a tenant and schedule that exist.
  @ManyToOne(() => TenantEntity, { createForeignKeyConstraints: false })
  @JoinColumn({ name: 'tenant_id' })
  tenant?: TenantEntity;

  @Column({ name: 'schedule_id', type: 'uuid' })
  scheduleId: string;

  @ManyToOne(() => ScheduleEntity, { createForeignKeyConstraints: false })
  @JoinColumn({ name: 'schedule_id' })
  schedule?: ScheduleEntity;

  @Column({ type: 'integer' })
  revision: number;

  /**
   * The target its schedule named when it was created: whose permits and rate it takes (per
   * target flow control). Null only for runs that ended before targets had flow control.
   */
  @Column({ name: 'target_id', type: 'uuid', nullable: true })
  targetId: string | null;

  /**
   * The nominal due instant (UTC); with the schedule and revision, the run's identity. Also the
   * partition key (and so part of the primary key): it never changes.
   */
  @PrimaryColumn({
    name: 'scheduled_at',
    type: 'timestamptz',
    primaryKeyConstraintName: 'occurrences_pkey',
  })
  scheduledAt: Date;

  /** The same instant as local wall time with offset in the schedule's timezone, for audit. */
  @Column({ name: 'scheduled_local', type: 'text' })
  scheduledLocal: string;

  @Column({ type: 'text' })
  state: string;

  /** A code of RUN_REASONS (machine-readable "why"); the free text is reason_detail. */
  @Column({ type: 'text', nullable: true })
  reason: string | null;

  @Column({ name: 'reason_detail', type: 'text', nullable: true })
  reasonDetail: string | null;

  /** What created it: RUN_TRIGGERS (the poller, a manual trigger, a replay, a backfill). */
  @Column({ type: 'text', default: 'schedule' })
  trigger: string;

  /**
   * The fourth part of the run's identity: '' for the poller's and manual runs, the original
   * run's id for a replay, the backfill's id for a backfilled run. So a replay or a backfill of
   * an instant never collides with the scheduled run of that instant, and each stays once.
   */
  @Column({ name: 'origin_key', type: 'text', default: '' })
  originKey: string;

  /** What its attempts send as Idempotency-Key when not its own id: a replay's original's. */
  @Column({ name: 'idempotency_key', type: 'uuid', nullable: true })
  idempotencyKey: string | null;

  /** The run this one replays. */
  @Column({ name: 'replay_of', type: 'uuid', nullable: true })
  replayOf: string | null;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount: number;

  @Column({ name: 'max_attempts', type: 'integer' })
  maxAttempts: number;

  /**
   * When admission took this run's permit and rate token (its queue job exists from then on).
   * Null while it waits for its tenant's budget, or waits for its turn behind a running run.
   */
  @Column({ name: 'admitted_at', type: 'timestamptz', nullable: true })
  admittedAt: Date | null;

  /** Its schedule's priority as a rank (0 high, 1 normal, 2 low): the waiting list's order. */
  @Column({ type: 'smallint', default: 1 })
  priority: number;

  /** Past this instant the run is SKIPPED deadline_exceeded instead of started (null: none). */
  @Column({ name: 'start_deadline', type: 'timestamptz', nullable: true })
  startDeadline: Date | null;

  /**
   * When it may start: its planned fire instant inside the schedule's flexible window (its
   * nominal scheduled_at without one). The claim never starts it before.
   */
  @Column({ name: 'fires_at', type: 'timestamptz' })
  firesAt: Date;

  @Column({ name: 'retry_deadline', type: 'timestamptz' })
  retryDeadline: Date;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil: Date | null;

  /** Raised by every claim; only the holder of the current value may change the run. */
  @Column({ name: 'fencing_token', type: 'bigint', default: 0 })
  fencingToken: string;

  @Column({ name: 'worker_id', type: 'text', nullable: true })
  workerId: string | null;

  @Column({ name: 'cancel_requested_at', type: 'timestamptz', nullable: true })
  cancelRequestedAt: Date | null;

  /** Missed instants folded into this run by the `latest` missed-run policy. */
  @Column({ name: 'coalesced_count', type: 'integer', default: 0 })
  coalescedCount: number;

  @Column({ name: 'coalesced_first', type: 'timestamptz', nullable: true })
  coalescedFirst: Date | null;

  @Column({ name: 'coalesced_last', type: 'timestamptz', nullable: true })
  coalescedLast: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  /**
   * The W3C traceparent of the span that created the run (the poller's dispatch or the manual
   * trigger), when tracing is on: every later span of the run is its child.
   */
  @Column({ name: 'trace_parent', type: 'text', nullable: true })
  traceParent: string | null;
}
