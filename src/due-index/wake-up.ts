/** The longest a poller sleeps without looking at its shards' next entry (a floor under NOTIFY). */
export const POLLER_MAX_SLEEP_MS = 1000;

/**
 * Writes of due entries wake the pollers (NOTIFY) only when the earliest entry is due within
 * this horizon. A later one needs no wake-up: every poller looks at its next entry at least every
 * POLLER_MAX_SLEEP_MS and prepares a batch at most POLLER_LOOKAHEAD_MS (≤ 1 s) ahead, so it sees
 * the entry in time; the third second is a margin for delivery and clock skew. Creates of
 * schedules due hours ahead then cost the pollers nothing.
 */
export const WAKE_HORIZON_MS = 3000;
