import {
  costBetween,
  extrapolate,
  REFERENCE,
  type CostReading,
} from '../../../bench/cost-arithmetic';

const reading = (over: Partial<CostReading>): CostReading => ({
  postgresCpuSeconds: 0,
  walBytes: 0,
  walRecords: 0,
  walFullPageImages: 0,
  statements: 0,
  foreignKeyChecks: 0,
  transactions: 0,
  roundTrips: 0,
  waits: 0,
  relationBytes: { history: 0, queue: 0, other: 0 },
  ...over,
});

describe('costBetween', () => {
  it('divides every delta by the runs delivered', () => {
    const cost = costBetween(
      reading({
        postgresCpuSeconds: 10,
        walBytes: 1_000,
        statements: 5,
        roundTrips: 7,
        waits: 4,
      }),
      reading({
        postgresCpuSeconds: 12,
        walBytes: 5_001_000,
        walRecords: 40_000,
        statements: 4_005,
        foreignKeyChecks: 1_000,
        transactions: 2_000,
        roundTrips: 3_007,
        waits: 1_504,
        relationBytes: { history: 1_500_000, queue: 800_000, other: -100_000 },
      }),
      { runs: 1_000, seconds: 10, serviceCpuSeconds: 1.5 },
    );
    expect(cost.perRun).toEqual({
      postgresCpuMs: 2,
      walBytes: 5_000,
      walRecords: 40,
      walFullPageImages: 0,
      statements: 4,
      foreignKeyChecks: 1,
      transactions: 2,
      roundTrips: 3,
      waits: 1.5,
      relationBytes: 2_200,
      historyBytes: 1_500,
      queueBytes: 800,
      otherBytes: -100,
      serviceCpuMs: 1.5,
    });
  });

  it('keeps unknown counters unknown and does not divide by zero runs', () => {
    const cost = costBetween(
      reading({ postgresCpuSeconds: null, statements: null, roundTrips: null, waits: null }),
      reading({ postgresCpuSeconds: 1, statements: 9, roundTrips: 9, walBytes: 10 }),
      { runs: 0, seconds: 1, serviceCpuSeconds: null },
    );
    expect(cost.perRun.postgresCpuMs).toBeNull();
    expect(cost.perRun.statements).toBeNull();
    expect(cost.perRun.roundTrips).toBeNull();
    expect(cost.perRun.waits).toBeNull();
    expect(cost.perRun.serviceCpuMs).toBeNull();
    expect(cost.perRun.walBytes).toBe(0);
  });
});

describe('extrapolate', () => {
  const perRun = costBetween(
    reading({}),
    reading({
      postgresCpuSeconds: 0.5,
      walBytes: 5_000_000,
      relationBytes: { history: 1_000_000, queue: 500_000, other: 0 },
    }),
    { runs: 1_000, seconds: 1, serviceCpuSeconds: 1 },
  ).perRun;

  it('scales CPU and WAL with the reference rates', () => {
    const e = extrapolate(perRun);
    // 0.5 ms per run × 10,000/s = 5 cores; × 30,000/s = 15.
    expect(e.postgresCores).toEqual({ average: 5, peak: 15 });
    // 5,000 B per run × 10,000/s = 50 MB/s.
    expect(e.walMBPerSecond).toEqual({ average: 50, peak: 150 });
    expect(e.walTBPerDay).toBe(4.32);
    // 1 ms of service CPU per run: 10 cores, 15 replicas of 0.7 core; 30 cores, 43 at peak.
    expect(e.serviceCores).toEqual({ average: 10, peak: 30 });
    expect(e.serviceReplicas).toEqual({ average: 15, peak: 43 });
  });

  it('keeps 7 days of history, an hour of queue jobs and a year of summaries', () => {
    const e = extrapolate(perRun);
    // 1,000 B × 10,000/s × 86,400 s × 7 days = 6.048 TB (the reference design's own figure at 1 KB).
    expect(e.storageTB.history).toBe(6.05);
    // 500 B × 10,000/s × 3,600 s = 0.018 TB.
    expect(e.storageTB.queue).toBe(0.018);
    expect(e.storageTB.summaries).toBe(
      Math.round((REFERENCE.schedules * REFERENCE.summaryDays * REFERENCE.summaryRowBytes) / 1e10) /
        100,
    );
    expect(e.storageTB.total).toBe(
      Math.round((6.048e12 + 0.018e12 + REFERENCE.schedules * 365 * 200) / 1e10) / 100,
    );
  });
});
