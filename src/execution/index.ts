export type {
  AttemptReport,
  Completion,
  CompletionResult,
  HeartbeatResult,
  RunFence,
} from './execution';
export { ExecutionModule } from './execution.module';
export { ExecutionService } from './execution.service';
export { retryDelayMs, type BackoffPolicy } from './retry-backoff';
export {
  LEASE_EXPIRED_DETAIL,
  transitionAfterAttempt,
  transitionAfterLeaseExpiry,
  type HeldRun,
  type Transition,
} from './run-transition';
