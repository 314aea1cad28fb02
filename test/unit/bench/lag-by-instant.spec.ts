import { lagByInstant } from '../../../bench/analysis';
import type { Receipt } from '../../../bench/sink';

const receipt = (scheduleId: string, scheduledAt: number, lagMs: number): Receipt => ({
  system: 'ours',
  runId: `${scheduleId}@${scheduledAt}`,
  attempt: 1,
  scheduleId,
  scheduledAt,
  receivedAt: scheduledAt + lagMs,
});

describe('lagByInstant', () => {
  it("judges each instant's receipts against that instant's occurrences alone", () => {
    const first = 1_000_000;
    const second = first + 20_000;
    const expected = ['a', 'b', 'c'].flatMap((id) => [
      { scheduleId: id, at: first },
      { scheduleId: id, at: second },
    ]);
    const receipts = [
      receipt('a', first, 300),
      receipt('b', first, 200),
      receipt('c', first, 100),
      receipt('a', second, 10),
      receipt('b', second, 30),
      // c's second occurrence never arrived; a late duplicate of a's first one did
      receipt('a', first, 900),
    ];
    const [one, two] = lagByInstant(receipts, expected, [first, second]);
    expect(one.at).toBe(first);
    expect(one.lag).toMatchObject({ p50: 200, max: 300 });
    expect(two.lag).toMatchObject({ p50: 10, max: 30 });
  });

  it('has no lag for an instant nothing reached', () => {
    const [only] = lagByInstant([], [{ scheduleId: 'a', at: 5 }], [5]);
    expect(only.lag).toBeNull();
  });
});
