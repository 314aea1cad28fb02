import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
} from 'typeorm';
import { CalendarEntity } from '../calendars/calendar.entity';
import { TenantEntity } from '../tenants/tenant.entity';

@Entity({ name: 'schedules' })
@Index('schedules_tenant_listing_idx', ['tenantId', 'createdAt', 'id'])
@Check(
  'schedules_timing_check',
  `(kind = 'once' AND run_at IS NOT NULL AND cron IS NULL AND every_seconds IS NULL)
  OR (kind = 'cron' AND cron IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL AND every_seconds IS NULL)
  OR (kind = 'interval' AND every_seconds > 0 AND anchor_at IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL AND cron IS NULL)`,
)
@Check('schedules_max_runs_check', `max_runs IS NULL OR max_runs > 0`)
@Check(
  'schedules_late_after_seconds_check',
  `late_after_seconds IS NULL OR late_after_seconds >= 0`,
)
@Check(
  'schedules_paused_reason_check',
  `paused_reason IS NULL OR paused_reason IN ('paused_by_request', 'consecutive_failures')`,
)
@Check('schedules_status_check', `status IN ('active', 'paused', 'cancelled', 'completed')`)
@Check('schedules_priority_check', `priority IN ('high', 'normal', 'low')`)
export class ScheduleEntity {
  @PrimaryGeneratedColumn('uuid', { primaryKeyConstraintName: 'schedules_pkey' })
  id: string;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  @ManyToOne(() => TenantEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'tenant_id', foreignKeyConstraintName: 'schedules_tenant_id_fkey' })
  tenant?: TenantEntity;

  @Column({ type: 'text' })
  name: string;

  @Column({ name: 'target_id', type: 'uuid' })
  targetId: string;

  /** Bumped by every edit; writes must name the revision they read (If-Match). */
  @Column({ type: 'integer', default: 1 })
  revision: number;

  @Column({ type: 'text' })
  status: string;

  @Column({ type: 'text' })
  kind: string;

  @Column({ name: 'run_at', type: 'timestamptz', nullable: true })
  runAt: Date | null;

  @Column({ type: 'text', nullable: true })
  cron: string | null;

  @Column({ type: 'text', nullable: true })
  timezone: string | null;

  @Column({ name: 'dst_nonexistent', type: 'text', default: 'skip' })
  dstNonexistent: string;

  @Column({ name: 'dst_repeated', type: 'text', default: 'first' })
  dstRepeated: string;

  @Column({ name: 'start_at', type: 'timestamptz', nullable: true })
  startAt: Date | null;

  @Column({ name: 'end_at', type: 'timestamptz', nullable: true })
  endAt: Date | null;

  @Column({ type: 'jsonb', default: () => `'{}'` })
  payload: object;

  @Column({ name: 'missed_run_policy', type: 'text' })
  missedRunPolicy: string;

  @Column({ name: 'max_catch_up', type: 'integer' })
  maxCatchUp: number;

  @Column({ name: 'overlap_policy', type: 'text' })
  overlapPolicy: string;

  /** high | normal | low: the order of its waiting runs within the tenant. */
  @Column({ type: 'text', default: 'normal' })
  priority: string;

  /** A run that cannot start within this many seconds of its instant is SKIPPED (null: never). */
  @Column({ name: 'start_deadline_seconds', type: 'integer', nullable: true })
  startDeadlineSeconds: number | null;

  @Column({ name: 'flexible_window_seconds', type: 'integer', default: 0 })
  flexibleWindowSeconds: number;

  @Column({ name: 'retry_max_attempts', type: 'integer' })
  retryMaxAttempts: number;

  @Column({ name: 'retry_initial_delay_ms', type: 'integer' })
  retryInitialDelayMs: number;

  @Column({ name: 'retry_max_delay_ms', type: 'integer' })
  retryMaxDelayMs: number;

  @Column({ name: 'retry_deadline_seconds', type: 'integer' })
  retryDeadlineSeconds: number;

  /** Interval schedules: seconds between runs, counted from anchor_at (the first run). */
  @Column({ name: 'every_seconds', type: 'integer', nullable: true })
  everySeconds: number | null;

  @Column({ name: 'anchor_at', type: 'timestamptz', nullable: true })
  anchorAt: Date | null;

  /** Key/value labels (GIN-indexed as schedules_labels_idx, for GET /schedules?label=k:v). */
  @Index('schedules_labels_idx', { synchronize: false })
  @Column({ type: 'jsonb', default: () => `'{}'` })
  labels: object;

  /** The local dates excluded: the schedule's own list, or a copy of its calendar's. */
  @Column({ name: 'excluded_dates', type: 'jsonb', default: () => `'[]'` })
  excludedDates: string[];

  @Column({ name: 'calendar_id', type: 'uuid', nullable: true })
  calendarId: string | null;

  @ManyToOne(() => CalendarEntity, { onDelete: 'RESTRICT' })
  @JoinColumn({ name: 'calendar_id', foreignKeyConstraintName: 'schedules_calendar_id_fkey' })
  calendar?: CalendarEntity;

  @Column({ name: 'max_runs', type: 'integer', nullable: true })
  maxRuns: number | null;

  /** Runs the poller created to run (QUEUED); the schedule completes when it reaches max_runs. */
  @Column({ name: 'run_count', type: 'integer', default: 0 })
  runCount: number;

  /** Auto-pause after this many consecutive FAILED/UNKNOWN runs (null: never). */
  @Column({ name: 'pause_after_failures', type: 'integer', nullable: true })
  pauseAfterFailures: number | null;

  /** A run that starts more than this many seconds after it was due is late (null: never). */
  @Column({ name: 'late_after_seconds', type: 'integer', nullable: true })
  lateAfterSeconds: number | null;

  /**
   * Only runs that finished after this count towards an auto-pause: set when the schedule is
   * created and when it is resumed, so a resume starts the count again.
   */
  @Column({ name: 'failures_counted_from', type: 'timestamptz', default: () => 'now()' })
  failuresCountedFrom: Date;

  @Column({ name: 'paused_reason', type: 'text', nullable: true })
  pausedReason: string | null;

  @Column({ name: 'paused_note', type: 'text', nullable: true })
  pausedNote: string | null;

  @Column({ name: 'next_due_at', type: 'timestamptz', nullable: true })
  nextDueAt: Date | null;

  /** The W3C traceparent of the request that created it (tracing on): its runs link to it. */
  @Column({ name: 'trace_parent', type: 'text', nullable: true })
  traceParent: string | null;

  /** The public id of the API key that created it: revision 1's author (see creationRevisionOf). */
  @Column({ name: 'created_by_key_id', type: 'text', nullable: true })
  createdByKeyId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
