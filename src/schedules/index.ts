export { IdempotencyKeyEntity } from './idempotency-key.entity';
export {
  DEFAULT_RETRY_POLICY,
  LIVE_STATUSES,
  MISSED_RUN_POLICIES,
  PAUSE_REASONS,
  SCHEDULE_STATUSES,
  type DispatchSchedule,
  type MissedRunPolicy,
  type PauseReason,
  type RetryPolicy,
  type Schedule,
  type ScheduleDefinition,
  type ScheduleStatus,
  type Timing,
} from './schedule';
export { plannedFireAt } from './fire-window';
export { recurrenceSpec, type ScheduleInput } from './schedule-definition';
export {
  REVISION_CHANGES,
  SYSTEM_ACTOR,
  type Actor,
  type FieldChange,
  type RevisionChange,
  type RevisionPage,
  type ScheduleRevision,
} from './schedule-revision';
export { ScheduleRevisionEntity } from './schedule-revision.entity';
export { ScheduleEntity } from './schedule.entity';
export { TenantScheduleCountEntity } from './schedule-count.entity';
export { SCHEDULE_LIMITS } from './schedule-limits';
export type { CreateOutcome, CreateRequest } from './schedule-creator';
export type { SlotRelease } from './schedule-quota.repository';
export type { ListPage, ScheduleAdvance } from './schedules.repository';
export { SchedulesModule } from './schedules.module';
export {
  SchedulesService,
  type PlannedInstant,
  type PreviewRequest,
  type ScheduleEdit,
} from './schedules.service';
