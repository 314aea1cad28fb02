/**
 * What became of one attempt (null on the attempt while it is in flight): the target confirmed
 * (`succeeded`), failed in a way that may be repeated (`retryable`) or not (`failed`), may have
 * acted without telling (`unknown`), the holder stopped on a cancel (`cancelled`), the lease ran
 * out with the attempt in flight (`lease_lost`), or a report came under a fence that no longer
 * held (`stale`).
 */
export const ATTEMPT_OUTCOMES = [
  'succeeded',
  'retryable',
  'failed',
  'unknown',
  'cancelled',
  'lease_lost',
  'stale',
] as const;
export type AttemptOutcome = (typeof ATTEMPT_OUTCOMES)[number];
