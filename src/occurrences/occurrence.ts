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

/** Why a run was SKIPPED (or is waiting): "why didn't it run?" is a query, not an investigation. */
export type SkipReason = 'overlap' | 'missed' | 'coalesced' | 'waiting_for_previous';

/** A run as the poller creates it. */
export interface NewOccurrence {
  tenantId: string;
  scheduleId: string;
  revision: number;
  scheduledAt: Date;
  scheduledLocal: string;
  state: 'QUEUED' | 'SKIPPED';
  reason: string | null;
  trigger: 'schedule' | 'manual';
  maxAttempts: number;
  retryDeadlineSeconds: number;
  coalescedCount?: number;
  coalescedFirst?: Date | null;
  coalescedLast?: Date | null;
}
