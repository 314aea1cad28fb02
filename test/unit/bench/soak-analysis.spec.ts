import {
  DEAD_TUPLE_SLACK,
  emptyMemory,
  growth,
  intervalLags,
  plateau,
  recovery,
  soakSpans,
  spanLag,
  summarizeRelations,
  type RelationRow,
  type RelationSummary,
  type SoakPhase,
  type SoakSample,
} from '../../../bench/soak-analysis';

const row = (over: Partial<RelationRow>): RelationRow => ({
  relid: 1,
  name: 'occurrences',
  root: 'occurrences',
  isPartition: false,
  tableBytes: 0,
  indexBytes: 0,
  liveTuples: 0,
  deadTuples: 0,
  autovacuums: 0,
  autoanalyzes: 0,
  lastAutovacuum: null,
  ...over,
});

describe('plateau', () => {
  it.each([
    ['flat after the growth', [1, 5, 10, 10, 10, 10, 10, 10, 10], true],
    ['a sawtooth within 10 %', [2, 6, 10, 9, 10, 9, 10.5, 9, 10.9], true],
    ['still growing', [1, 2, 3, 4, 5, 6, 7, 8, 9], false],
    ['just over 10 %', [1, 1, 1, 10, 10, 10, 11.1, 10, 10], false],
  ])('%s', (_name, values, pass) => {
    expect(plateau(values)?.pass).toBe(pass);
  });

  it('compares the maxima of the middle and the last thirds', () => {
    expect(plateau([100, 1, 2, 3, 8, 4, 5, 6, 7])).toEqual({
      middleMax: 8,
      lastMax: 7,
      ratio: 0.875,
      pass: true,
    });
  });

  it('says nothing with fewer than three samples', () => {
    expect(plateau([1, 2])).toBeNull();
  });
});

describe('growth', () => {
  it.each([
    [100, 120, true],
    [100, 120.1, false],
    [100, 50, true],
    [0, 0, true],
    [0, 1, false],
  ])('%p ms → %p ms passes: %p', (first, last, pass) => {
    expect(growth(first, last).pass).toBe(pass);
  });
});

describe('intervalLags', () => {
  it('buckets by nominal instant, not by receipt, and ignores instants outside', () => {
    const lags = intervalLags(
      [
        { at: 1000, receivedAt: 1010 },
        { at: 1999, receivedAt: 2500 }, // received in the next interval, due in the first
        { at: 2000, receivedAt: 2020 },
        { at: 999, receivedAt: 1000 },
        { at: 3000, receivedAt: 3001 },
      ],
      1000,
      1000,
      2,
    );
    expect(lags[0]).toMatchObject({ p50: 10, max: 501 });
    expect(lags[1]).toMatchObject({ p50: 20, max: 20 });
  });

  it('leaves an empty interval null', () => {
    expect(intervalLags([], 0, 1000, 1)).toEqual([null]);
  });
});

describe('spanLag', () => {
  it('pools the runs due in intervals [first, end) into one p99', () => {
    // 100 runs per 1,000 ms interval; interval 0 all 900 ms late, then 1 run in 50 at 500 ms.
    const delivered = Array.from({ length: 400 }, (_, i) => ({
      at: i * 10,
      receivedAt: i * 10 + (i < 100 ? 900 : i % 50 === 49 ? 500 : 10),
    }));
    // Intervals 1 and 2: 200 runs, 4 of them 500 ms late; the p99 (the 198th) is one of them.
    expect(spanLag(delivered, 0, 1000, 1, 3)).toEqual({ p50: 10, p95: 10, p99: 500, max: 500 });
    expect(spanLag(delivered, 0, 1000, 0, 1)).toMatchObject({ p50: 900 });
    expect(spanLag(delivered, 0, 1000, 4, 5)).toBeNull();
  });
});

describe('soakSpans', () => {
  it('compares the steady thirds after warm-up and the recovery second half', () => {
    expect(soakSpans({ steady: 18, held: 4, recovery: 4 })).toEqual({
      steadyFirst: [1, 6],
      steadyLast: [13, 18],
      recovered: [24, 26],
    });
  });

  it('keeps one interval per span for a short soak', () => {
    expect(soakSpans({ steady: 2, held: 1, recovery: 1 })).toEqual({
      steadyFirst: [1, 2],
      steadyLast: [1, 2],
      recovered: [3, 4],
    });
  });
});

describe('summarizeRelations', () => {
  it('sums per root, counts autovacuums since the last sample and partitions that went away', () => {
    const memory = emptyMemory();
    const first = summarizeRelations(
      [
        row({
          relid: 1,
          name: 'occurrences_p1',
          isPartition: true,
          tableBytes: 10,
          indexBytes: 5,
          deadTuples: 3,
          autovacuums: 2,
        }),
        row({
          relid: 2,
          name: 'occurrences_p2',
          isPartition: true,
          tableBytes: 20,
          indexBytes: 5,
          autovacuums: 1,
        }),
        row({ relid: 3, name: 'job', root: 'pgboss.job', tableBytes: 7, lastAutovacuum: 5000 }),
      ],
      memory,
    );
    expect(first).toMatchObject({
      tableBytes: 37,
      indexBytes: 10,
      deadTuples: 3,
      autovacuums: 0,
      partitionsDropped: 0,
    });
    expect(first.byRoot.occurrences).toEqual({
      tableBytes: 30,
      indexBytes: 10,
      deadTuples: 3,
      partitions: 2,
    });
    expect(first.lastAutovacuum).toBe(5000);
    const second = summarizeRelations(
      [
        row({
          relid: 2,
          name: 'occurrences_p2',
          isPartition: true,
          tableBytes: 20,
          autovacuums: 3,
        }),
        row({ relid: 4, name: 'occurrences_p3', isPartition: true, tableBytes: 1, autovacuums: 9 }),
      ],
      memory,
    );
    // p2 vacuumed twice since; p3 is new (no baseline); p1 was dropped with its counters.
    expect(second.autovacuums).toBe(2);
    expect(second.partitionsDropped).toBe(1);
    expect(second.byRoot.occurrences.partitions).toBe(2);
  });
});

describe('recovery', () => {
  const summary = (dead: number): RelationSummary => ({
    tableBytes: 0,
    indexBytes: 0,
    liveTuples: 0,
    deadTuples: dead,
    autovacuums: 0,
    autoanalyzes: 0,
    lastAutovacuum: null,
    partitionsDropped: 0,
    byRoot: {},
  });
  const sample = (phase: SoakPhase, dead: number): SoakSample => ({
    t: 0,
    phase,
    relations: summary(dead),
    lag: null,
    received: 0,
  });
  const run = (end: number) => [
    sample('steady', 50_000),
    sample('steady', 9000),
    sample('steady', 10_000),
    sample('held', 80_000),
    sample('recovery', 40_000),
    sample('recovery', end),
  ];

  it('passes when dead tuples are back near the steady phase and p99 within 20 %', () => {
    const r = recovery(run(10_000 * 1.2 + DEAD_TUPLE_SLACK), { beforeHold: 100, atEnd: 110 });
    expect(r).toMatchObject({
      deadBaseline: 10_000,
      deadPeakHeld: 80_000,
      deadRecovered: true,
      pass: true,
    });
  });

  it('fails when dead tuples stay up, or when the lag does not come back', () => {
    expect(recovery(run(13_001 + 1), { beforeHold: 100, atEnd: 100 })?.pass).toBe(false);
    expect(recovery(run(10_000), { beforeHold: 100, atEnd: 121 })?.pass).toBe(false);
  });

  it('says nothing without a recovery phase', () => {
    expect(recovery([sample('steady', 1)], { beforeHold: 1, atEnd: 1 })).toBeNull();
  });
});
