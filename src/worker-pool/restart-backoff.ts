/** The first restart of a child that died waits this long; each further one twice as long. */
export const RESTART_BASE_MS = 1_000;
export const RESTART_MAX_MS = 30_000;
/** A child that lived this long before dying was healthy: its next restart is quick again. */
export const HEALTHY_LIFETIME_MS = 60_000;

/**
 * How long to wait before forking a replacement for a child that exited unexpectedly, given how
 * many times in a row that slot's child died young (1 for the first): doubling, bounded, so a
 * child that cannot start (a bad database URL) does not fork in a hot loop.
 */
export function restartDelayMs(consecutiveFailures: number): number {
  const exponent = Math.max(0, Math.min(consecutiveFailures - 1, 16));
  return Math.min(RESTART_MAX_MS, RESTART_BASE_MS * 2 ** exponent);
}

/** The slot's count of deaths in a row after one more, given how long the child lived. */
export function failuresAfterExit(previous: number, livedMs: number): number {
  return livedMs >= HEALTHY_LIFETIME_MS ? 1 : previous + 1;
}
