import { describeSlowRuns, slowestRuns, type RunStages } from '../../../bench/slow-runs';
import type { Receipt } from '../../../bench/sink';

const run = (id: string, atMs: number, createdMs: number, claimedMs: number | null): RunStages => ({
  id,
  atMs,
  createdMs,
  claimedMs,
});

describe('slowestRuns', () => {
  const origin = 1_000_000;
  const runs = [
    run('a', origin + 4_065, 53.8, 60.3),
    run('b', origin + 4_070, 48.8, 55.3),
    run('c', origin + 9_000, 1, 3),
    run('never', origin + 9_005, 1, null),
  ];
  const receipt = (runId: string, receivedAt: number, attempt = 1): Receipt => ({
    system: 'ours',
    runId,
    attempt,
    scheduleId: `s-${runId}`,
    scheduledAt: 0,
    receivedAt,
  });
  const received = [
    receipt('a', origin + 4_065 + 66),
    receipt('b', origin + 4_070 + 61),
    receipt('c', origin + 9_000 + 80),
    // a retry of b's received later: b's lag is its first receipt's
    receipt('b', origin + 4_070 + 500, 2),
  ];

  it('ranks the received runs by their lag to the receipt, slowest first, at most count', () => {
    const slowest = slowestRuns(runs, received, { origin, count: 2 });
    expect(slowest).toEqual([
      { atSeconds: 9, createdMs: 1, claimedMs: 3, receivedMs: 80 },
      { atSeconds: 4.065, createdMs: 53.8, claimedMs: 60.3, receivedMs: 66 },
    ]);
  });

  it('leaves out runs never received, and counts each run from its first receipt', () => {
    const all = slowestRuns(runs, received, { origin, count: 10 });
    expect(all.map((r) => r.atSeconds)).toEqual([9, 4.065, 4.07]);
  });

  it("describes each run's instant and its dispatched/claimed/received lags", () => {
    const slowest = slowestRuns(runs, received, { origin, count: 2 });
    expect(describeSlowRuns(slowest)).toBe('9.000 s 1/3/80 ms, 4.065 s 54/60/66 ms');
    expect(describeSlowRuns([{ atSeconds: 1, createdMs: 2, claimedMs: null, receivedMs: 9 }])).toBe(
      '1.000 s 2/-/9 ms',
    );
  });
});
