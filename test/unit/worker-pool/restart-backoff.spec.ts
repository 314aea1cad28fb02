import {
  failuresAfterExit,
  HEALTHY_LIFETIME_MS,
  RESTART_MAX_MS,
  restartDelayMs,
} from '../../../src/worker-pool/restart-backoff';

describe('restarting a worker process that died', () => {
  it.each([
    [1, 1_000],
    [2, 2_000],
    [3, 4_000],
    [5, 16_000],
    [6, RESTART_MAX_MS],
    [1_000, RESTART_MAX_MS],
  ])('after %i death(s) in a row waits %i ms', (failures, delay) => {
    expect(restartDelayMs(failures)).toBe(delay);
  });

  it('counts deaths of children that die young, and starts over after a healthy life', () => {
    expect(failuresAfterExit(0, 10)).toBe(1);
    expect(failuresAfterExit(3, HEALTHY_LIFETIME_MS - 1)).toBe(4);
    expect(failuresAfterExit(7, HEALTHY_LIFETIME_MS)).toBe(1);
  });
});
