import {
  nextSummaryGapMs,
  WAITING_SUMMARY_INTERVAL_MS,
} from '../../../src/admission/summary-cadence';

describe('the cadence of the waiting lists summary', () => {
  it('is once a second while the count is cheap', () => {
    expect(nextSummaryGapMs(0)).toBe(WAITING_SUMMARY_INTERVAL_MS);
    expect(nextSummaryGapMs(11.5)).toBe(WAITING_SUMMARY_INTERVAL_MS);
    expect(nextSummaryGapMs(20)).toBe(WAITING_SUMMARY_INTERVAL_MS);
  });

  it('spaces a slow count out so it takes at most 2 % of the time', () => {
    expect(nextSummaryGapMs(100)).toBe(5000);
    expect(nextSummaryGapMs(500)).toBe(25_000);
    for (const took of [21, 60, 250, 1200]) expect(took / nextSummaryGapMs(took)).toBeCloseTo(0.02);
  });
});
