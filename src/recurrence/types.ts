/** What to do with a cron-matching local time that does not exist (spring-forward gap). */
export type NonexistentPolicy = 'skip' | 'shift_forward';

/** What to do with a cron-matching local time that happens twice (fall-back overlap). */
export type RepeatedPolicy = 'first' | 'last' | 'both';

export interface DstPolicy {
  nonexistent: NonexistentPolicy;
  repeated: RepeatedPolicy;
}

export const DEFAULT_DST_POLICY: Readonly<DstPolicy> = Object.freeze({
  nonexistent: 'skip',
  repeated: 'first',
});

/**
 * A recurrence: cron fields matched in local wall time, or (`every`) a fixed interval from an
 * anchor instant. Exactly one of `cron` and `every`.
 */
export interface RecurrenceSpec {
  cron?: string;
  /** Interval schedules: seconds between runs, counted from `anchorAt` (the first run). */
  every?: number;
  anchorAt?: Date;
  /**
   * IANA zone name; cron fields are matched against the wall clock of this zone, and local
   * times and excluded dates are read in it.
   */
  timezone: string;
  /**
   * Local dates (YYYY-MM-DD) on which nothing runs. For cron, the date the fields matched (the
   * nominal wall date, before the DST policy moves a time); for an interval, the local date of
   * the instant.
   */
  excludeDates?: readonly string[];
  /** Defaults to {@link DEFAULT_DST_POLICY}. */
  dstPolicy?: DstPolicy;
  /** Inclusive lower bound for occurrences. */
  startAt?: Date | null;
  /** Inclusive upper bound for occurrences. */
  endAt?: Date | null;
}

export interface Occurrence {
  at: Date;
  /**
   * The zone's actual wall-clock reading at `at`, ISO-8601 with offset and seconds, e.g.
   * '2027-11-07T01:30:00-04:00'. For a run moved by `shift_forward` this is the time it really
   * runs (the end of the gap), not the nominal cron time that fell into the gap.
   */
  local: string;
}

export interface OccurrenceWindow {
  occurrences: Occurrence[];
  /** True when the window held more than `limit` occurrences (callers may coalesce them). */
  truncated: boolean;
}
