/** The part of a schedule's retry policy that spaces its attempts. */
export interface BackoffPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
}

function nonNegative(n: number): number {
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/**
 * Delay before the next attempt after attempt number `attempt` (1-based) failed.
 *
 * Full jitter: uniform in [0, min(maxDelayMs, initialDelayMs * 2^(attempt-1))), which spreads a
 * burst of failures against one target better than jitter around a fixed delay.
 *
 * A server-sent Retry-After is a floor — we never come back sooner than asked — but it is
 * capped at maxDelayMs, so the tenant's retry policy, not the target, bounds how long a run is
 * parked.
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  random: () => number,
  retryAfterMs?: number | null,
): number {
  const maxDelay = nonNegative(policy.maxDelayMs);
  // Capping the exponent keeps 2^n finite; beyond 2^52 the max delay applies anyway.
  const exponent = Math.min(Math.max(0, Math.floor(attempt) - 1), 52);
  const ceiling = Math.min(maxDelay, nonNegative(policy.initialDelayMs) * 2 ** exponent);
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  const jittered = Math.floor(unit * ceiling);
  if (retryAfterMs === null || retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(Math.ceil(nonNegative(retryAfterMs)), maxDelay));
}
