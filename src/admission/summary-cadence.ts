/** How often the admitter reports the waiting lists at most. */
export const WAITING_SUMMARY_INTERVAL_MS = 1000;

/**
 * The summary's share of the admitter's time it may take at most: its count is a scan of every
 * waiting run (11.5 ms with 20,000 waiting in the bench), which once a second would be half a
 * connection's time with a million waiting.
 */
const MAX_TIME_SHARE = 0.02;

/**
 * How long to wait before the next summary of the waiting lists, given how long the last one
 * took: once a second while it is cheap, and never more than MAX_TIME_SHARE of the time.
 */
export function nextSummaryGapMs(lastTookMs: number): number {
  return Math.max(WAITING_SUMMARY_INTERVAL_MS, lastTookMs / MAX_TIME_SHARE);
}
