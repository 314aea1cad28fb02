import { extrapolationSource } from '../../../bench/cost-report';
import type { OccurrenceCost } from '../../../bench/cost-arithmetic';
import type { ScenarioResult } from '../../../bench/context';

const cost = (runs: number, seconds: number): OccurrenceCost => ({
  runs,
  seconds,
  perRun: {
    postgresCpuMs: 1,
    walBytes: 6_000,
    walRecords: 50,
    walFullPageImages: 0,
    statements: 1.5,
    foreignKeyChecks: 1,
    transactions: 0.2,
    roundTrips: 0.5,
    waits: 0.4,
    relationBytes: 1_000,
    historyBytes: 900,
    queueBytes: 50,
    otherBytes: 50,
    serviceCpuMs: 0.7,
  },
});

const row = (scenario: string, label: string, c: OccurrenceCost | null): ScenarioResult => ({
  scenario,
  system: 'dueline',
  label,
  params: {},
  delivery: null,
  resources: null,
  extra: c ? { cost: c } : {},
  notes: [],
});

describe('extrapolationSource', () => {
  it('takes the steady-type row that delivered the most runs per second', () => {
    const slow = row('steady', 'steady 200/s', cost(4_000, 20));
    const fast = row('steady', 'steady 1000/s', cost(20_000, 20));
    expect(extrapolationSource([slow, fast, row('burst', 'burst', null)])).toBe(fast);
  });

  it("never takes a noisy phase's flood, however fast it delivered", () => {
    const steady = row('steady', 'steady 200/s', cost(4_000, 20));
    const flood = row('noisy', 'noisy: beside two floods', cost(22_000, 50));
    expect(extrapolationSource([flood, steady])).toBe(steady);
  });

  it('falls back to the soak only when nothing else was metered', () => {
    const soak = row('soak', 'soak', cost(1_000, 100));
    expect(extrapolationSource([soak, row('noisy', 'noisy', cost(22_000, 50))])).toBe(soak);
    expect(extrapolationSource([row('noisy', 'noisy', cost(22_000, 50))])).toBeNull();
  });
});
