import type { DeliveryStats } from '../../../bench/analysis';
import { parseArgs } from '../../../bench/cli';
import { checkTargets } from '../../../bench/report';

describe('bench flags: --warmup-seconds', () => {
  it('is 0 unless given, so the targets are judged from cold by default', () => {
    expect(parseArgs(['steady']).flags.warmupSeconds).toBe(0);
    expect(parseArgs(['all']).flags.warmupSeconds).toBe(0);
  });

  it('takes a whole number of seconds, 0 included', () => {
    expect(parseArgs(['steady', '--warmup-seconds', '10']).flags.warmupSeconds).toBe(10);
    expect(parseArgs(['steady', '--warmup-seconds=0']).flags.warmupSeconds).toBe(0);
  });

  it('refuses anything else', () => {
    expect(() => parseArgs(['steady', '--warmup-seconds', '-1'])).toThrow(/warmup-seconds/);
    expect(() => parseArgs(['steady', '--warmup-seconds', '1.5'])).toThrow(/warmup-seconds/);
    expect(() => parseArgs(['steady', '--warmup-seconds='])).toThrow(/warmup-seconds/);
    // Flags without a "none" keep refusing 0.
    expect(() => parseArgs(['steady', '--seconds', '0'])).toThrow(/positive integer/);
  });
});

describe('the steady targets name a warm-up', () => {
  const steady = (warmupSeconds: number) => ({
    scenario: 'steady',
    system: 'dueline',
    label: 'steady 1000/s',
    params: { rate: 1000, seconds: 30, warmupSeconds },
    delivery: {
      expected: 100,
      delivered: 100,
      undelivered: 0,
      pending: 0,
      lost: 0,
      early: 0,
      duplicates: 0,
      unexpected: 0,
      retries: 0,
      lagMs: { p50: 40, p95: 90, p99: 120, max: 130 },
      achievedPerSecond: 1000,
      lostSample: [],
    } as DeliveryStats,
    resources: null,
    extra: {},
    notes: [],
  });
  const line = (warmupSeconds: number) =>
    checkTargets([steady(warmupSeconds)]).find((c) => c.target.startsWith('steady 1000/s'));

  it('says when the judged window followed one, and judges it the same way', () => {
    expect(line(10)).toMatchObject({
      target: expect.stringContaining('for 30 s after 10 s of warm-up: p99 lag ≤ 150.0 ms'),
      pass: true,
    });
    expect(line(0)!.target).not.toContain('warm-up');
    expect(line(0)!.pass).toBe(true);
  });
});
