export const RUN_STATES = [
  'QUEUED',
  'RUNNING',
  'RETRY_WAIT',
  'SUCCEEDED',
  'FAILED',
  'SKIPPED',
  'CANCELLED',
  'UNKNOWN',
] as const;
export type RunState = (typeof RUN_STATES)[number];

/** States a run can still leave; the rest are final. */
export const ACTIVE_RUN_STATES: readonly RunState[] = ['QUEUED', 'RUNNING', 'RETRY_WAIT'];

/** The states a run can be in while no attempt of it is running. */
export type WaitingRunState = 'QUEUED' | 'RETRY_WAIT';

/** The states an attempt's end or a lease expiry can move a RUNNING run to. */
export type LeavingState = 'SUCCEEDED' | 'RETRY_WAIT' | 'FAILED' | 'UNKNOWN' | 'CANCELLED';
