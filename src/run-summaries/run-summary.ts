import type { RunReason, RunState } from '../run-vocabulary';

/** The longest range GET /schedules/{id}/summary answers, in UTC days. */
export const MAX_SUMMARY_DAYS = 400;

/** Lag percentiles answered when the range gives none. */
export const DEFAULT_SUMMARY_DAYS = 7;

/**
 * Due-to-start lag of a set of runs: first attempt start minus fires_at, in ms. `exact` says
 * the percentiles are the runs' own (one slice); otherwise they come from the merged
 * histogram (within about 4.4 %). The maximum is always exact.
 */
export interface LagSummary {
  count: number;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  exact: boolean;
}

export interface OutcomeSummary {
  state: RunState;
  reason: RunReason | null;
  runs: number;
  attempts: number;
  lag: LagSummary;
}

/** One UTC day of a schedule's runs (by scheduled_at), from summaries and rows together. */
export interface DaySummary {
  /** YYYY-MM-DD, UTC. */
  day: string;
  runs: number;
  attempts: number;
  lag: LagSummary;
  outcomes: OutcomeSummary[];
}

export interface ScheduleSummary {
  scheduleId: string;
  /** First day answered (YYYY-MM-DD, UTC) … */
  fromDay: string;
  /** … and the day after the last one. */
  toDay: string;
  days: DaySummary[];
}

/** The range a summary answers, as whole UTC days [fromDay, toDay). */
export interface SummaryRange {
  fromDay: string;
  toDay: string;
}
