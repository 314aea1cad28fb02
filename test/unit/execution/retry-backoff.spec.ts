import { retryDelayMs } from '../../../src/execution';

describe('retryDelayMs', () => {
  const policy = { initialDelayMs: 1000, maxDelayMs: 60_000 };
  const max = () => 0.999999;

  it.each([
    // attempt, random, retryAfterMs, expected
    [1, 0.5, undefined, 500],
    [1, 0, undefined, 0],
    [1, 0.999999, undefined, 999],
    [2, 0.5, undefined, 1000],
    [3, 0.5, undefined, 2000],
    [4, 1, undefined, 8000],
    [7, 1, undefined, 60_000], // 64 s ceiling capped at 60 s
    [1000, 0.5, undefined, 30_000], // huge attempt numbers stay finite
    [0, 0.5, undefined, 500], // attempts below 1 behave like the first
    [-3, 0.5, undefined, 500],
    [1, 0.5, null, 500],
    [1, 0.1, 5000, 5000], // Retry-After is a floor above the jittered value
    [6, 0.9, 5000, 28_800], // jitter above Retry-After wins
    [1, 0.1, 3_600_000, 60_000], // Retry-After capped at maxDelayMs
    [1, 0.1, 0, 100],
    [1, 0.1, 1.2, 100],
    [1, 0, 1.2, 2], // fractional ms rounded up so we never come back early
    [1, 0.5, -50, 500],
    [1, Number.NaN, undefined, 0], // a broken random source must not produce NaN
    [1, 7, undefined, 1000],
    [1, -1, undefined, 0],
  ])('attempt %d, random %d, retryAfter %p -> %d', (attempt, r, retryAfter, expected) => {
    expect(retryDelayMs(attempt, policy, () => r, retryAfter)).toBe(expected);
  });

  it('never exceeds maxDelayMs', () => {
    for (let attempt = 1; attempt <= 40; attempt++) {
      expect(retryDelayMs(attempt, policy, max)).toBeLessThanOrEqual(policy.maxDelayMs);
      expect(retryDelayMs(attempt, policy, max, 10 ** 9)).toBeLessThanOrEqual(policy.maxDelayMs);
    }
  });

  it('handles degenerate policies', () => {
    expect(retryDelayMs(5, { initialDelayMs: 0, maxDelayMs: 1000 }, () => 0.5)).toBe(0);
    expect(retryDelayMs(5, { initialDelayMs: 100, maxDelayMs: 0 }, () => 0.5, 500)).toBe(0);
  });
});
