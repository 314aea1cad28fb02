/** Protective limits on what a schedule may ask for; they bound the work one tenant can create. */
export const SCHEDULE_LIMITS = {
  /** Consecutive occurrences of one schedule may not be closer than this. */
  minIntervalSeconds: 1,
  /** runAt, and a cron schedule's first occurrence, must fall within this horizon. */
  maxHorizonDays: 5 * 366,
  maxPayloadBytes: 64 * 1024,
  maxCatchUp: 1000,
  maxPreviewCount: 100,
  /** A start deadline longer than a day is no deadline a scheduler should keep. */
  maxStartDeadlineSeconds: 86_400,
  /** A flexible window of more than an hour is a different schedule, not a smoothed one. */
  maxFlexibleWindowSeconds: 3600,
  /** Labels per schedule, and the length of a label's key and value. */
  maxLabels: 20,
  maxLabelKeyLength: 63,
  maxLabelValueLength: 128,
  /** Local dates one schedule (or one calendar) may exclude. */
  maxExcludeDates: 1000,
  /** The longest interval of an `every` schedule. */
  maxEverySeconds: 366 * 86_400,
  maxRuns: 1_000_000,
  /** lateAfterSeconds: at most a week. */
  maxLateAfterSeconds: 7 * 24 * 3600,
  /** Items of one POST /schedules/batch (its body is bounded too: BATCH_BODY_LIMIT). */
  maxBatchItems: 1000,
} as const;
