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
  /** Items of one POST /schedules/batch (its body is bounded too: BATCH_BODY_LIMIT). */
  maxBatchItems: 1000,
} as const;
