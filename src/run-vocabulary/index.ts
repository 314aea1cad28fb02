export {
  ACTIVE_RUN_STATES,
  RUN_STATES,
  type LeavingState,
  type RunState,
  type WaitingRunState,
} from './run-state';
export {
  ADMISSION_WAITS,
  isRunReason,
  RUN_REASON_CODES,
  RUN_REASONS,
  type AdmissionWait,
  type CancelReason,
  type EndReason,
  type RunReason,
  type SkipReason,
  type WaitReason,
} from './run-reason';
export { ATTEMPT_OUTCOMES, type AttemptOutcome } from './attempt-outcome';
export { priorityOfRank, priorityRank, RUN_PRIORITIES, type RunPriority } from './run-priority';
