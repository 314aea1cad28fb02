import { lagStats, type LagStats } from './analysis';

/**
 * The soak's judgement, as pure functions (unit-tested): relation statistics folded into one
 * sample per interval, the plateau of the sizes, the growth of the p99 lag, and the recovery after
 * a long transaction held back the xmin horizon.
 */

/** The soak's phases, in the order they run. */
export const SOAK_PHASES = ['steady', 'held', 'recovery'] as const;
export type SoakPhase = (typeof SOAK_PHASES)[number];

/** One relation (table or partition) of ours or pg-boss's, as pg_class + pg_stat_user_tables say. */
export interface RelationRow {
  relid: number;
  name: string;
  /** Its partition root's name (itself when not a partition). */
  root: string;
  isPartition: boolean;
  tableBytes: number;
  indexBytes: number;
  liveTuples: number;
  deadTuples: number;
  autovacuums: number;
  autoanalyzes: number;
  /** Epoch ms of its last autovacuum, or null. */
  lastAutovacuum: number | null;
}

export interface RootFigures {
  tableBytes: number;
  indexBytes: number;
  deadTuples: number;
  partitions: number;
}

export interface RelationSummary {
  tableBytes: number;
  indexBytes: number;
  liveTuples: number;
  deadTuples: number;
  /** Autovacuum runs since the previous sample, on relations present in both. */
  autovacuums: number;
  autoanalyzes: number;
  lastAutovacuum: number | null;
  /** Partitions seen at some sample and gone now (detached and dropped), cumulative. */
  partitionsDropped: number;
  byRoot: Record<string, RootFigures>;
}

/** What a sampler carries from one sample to the next. */
export interface RelationMemory {
  counts: Map<number, { autovacuums: number; autoanalyzes: number }>;
  partitionsSeen: Set<string>;
}

export const emptyMemory = (): RelationMemory => ({ counts: new Map(), partitionsSeen: new Set() });

/** Folds one reading of every relation into totals, per root, and deltas since `memory`. */
export function summarizeRelations(
  rows: readonly RelationRow[],
  memory: RelationMemory,
): RelationSummary {
  const summary: RelationSummary = {
    tableBytes: 0,
    indexBytes: 0,
    liveTuples: 0,
    deadTuples: 0,
    autovacuums: 0,
    autoanalyzes: 0,
    lastAutovacuum: null,
    partitionsDropped: 0,
    byRoot: {},
  };
  const present = new Set<string>();
  const counts = new Map<number, { autovacuums: number; autoanalyzes: number }>();
  for (const r of rows) {
    summary.tableBytes += r.tableBytes;
    summary.indexBytes += r.indexBytes;
    summary.liveTuples += r.liveTuples;
    summary.deadTuples += r.deadTuples;
    const before = memory.counts.get(r.relid);
    if (before) {
      summary.autovacuums += Math.max(0, r.autovacuums - before.autovacuums);
      summary.autoanalyzes += Math.max(0, r.autoanalyzes - before.autoanalyzes);
    }
    counts.set(r.relid, { autovacuums: r.autovacuums, autoanalyzes: r.autoanalyzes });
    if (r.lastAutovacuum !== null) {
      summary.lastAutovacuum = Math.max(summary.lastAutovacuum ?? 0, r.lastAutovacuum);
    }
    const root = (summary.byRoot[r.root] ??= {
      tableBytes: 0,
      indexBytes: 0,
      deadTuples: 0,
      partitions: 0,
    });
    root.tableBytes += r.tableBytes;
    root.indexBytes += r.indexBytes;
    root.deadTuples += r.deadTuples;
    if (r.isPartition) {
      root.partitions++;
      present.add(r.name);
      memory.partitionsSeen.add(r.name);
    }
  }
  for (const name of memory.partitionsSeen) if (!present.has(name)) summary.partitionsDropped++;
  memory.counts = counts;
  return summary;
}

/** One progress interval of the soak. */
export interface SoakSample {
  /** Seconds since the load's window opened, at the end of the interval. */
  t: number;
  phase: SoakPhase;
  relations: RelationSummary;
  /** Lag of the receipts received during the interval. */
  lag: LagStats | null;
  received: number;
}

export const totalBytes = (s: { tableBytes: number; indexBytes: number }) =>
  s.tableBytes + s.indexBytes;

export interface Plateau {
  middleMax: number;
  lastMax: number;
  ratio: number;
  pass: boolean;
}

/**
 * Sizes plateau when the largest value of the last third of the series is at most `limit` times
 * the largest of the middle third (the first third is the growth before retention starts to
 * drop partitions). Null when there are fewer than three values.
 */
export function plateau(values: readonly number[], limit = 1.1): Plateau | null {
  if (values.length < 3) return null;
  const third = Math.floor(values.length / 3);
  const middle = values.slice(third, values.length - third);
  const last = values.slice(values.length - third);
  const middleMax = Math.max(...middle);
  const lastMax = Math.max(...last);
  const ratio = middleMax > 0 ? lastMax / middleMax : lastMax > 0 ? Infinity : 1;
  return { middleMax, lastMax, ratio: Math.round(ratio * 1000) / 1000, pass: ratio <= limit };
}

/** A delivered occurrence: its nominal instant and its first receipt (epoch ms). */
export interface Delivered {
  at: number;
  receivedAt: number;
}

/**
 * Lag per interval of nominal instants: interval i holds the occurrences due in
 * [from + i·length, from + (i+1)·length).
 */
export function intervalLags(
  delivered: readonly Delivered[],
  from: number,
  lengthMs: number,
  intervals: number,
): Array<LagStats | null> {
  const buckets: number[][] = Array.from({ length: intervals }, () => []);
  for (const d of delivered) {
    const i = intervalOf(d, from, lengthMs);
    if (i >= 0 && i < intervals) buckets[i].push(d.receivedAt - d.at);
  }
  return buckets.map((b) => lagStats(b));
}

/**
 * The lag of every run due in intervals [first, end), pooled: one interval's p99 rests on its
 * worst ~45 runs (4,500 at 150/s) and swings by a third from one interval to the next on a quiet
 * machine, too coarse to judge a 20 % change by; a span of several intervals gives it thousands.
 */
export function spanLag(
  delivered: readonly Delivered[],
  from: number,
  lengthMs: number,
  first: number,
  end: number,
): LagStats | null {
  const lags: number[] = [];
  for (const d of delivered) {
    const i = intervalOf(d, from, lengthMs);
    if (i >= first && i < end) lags.push(d.receivedAt - d.at);
  }
  return lagStats(lags);
}

/** The interval a run belongs to: by its nominal instant, not by when it was received. */
const intervalOf = (d: Delivered, from: number, lengthMs: number): number =>
  Math.floor((d.at - from) / lengthMs);

/**
 * The spans the soak compares, as [first, end) interval indexes: the steady phase's first and
 * last thirds (the cold-start interval 0 left out) and the recovery phase's second half (its
 * first half is the time given to recover).
 */
export function soakSpans(phases: Record<SoakPhase, number>): {
  steadyFirst: [number, number];
  steadyLast: [number, number];
  recovered: [number, number];
} {
  const steady = phases.steady;
  const third = Math.max(1, Math.floor((steady - 1) / 3));
  const total = steady + phases.held + phases.recovery;
  const half = Math.max(1, Math.floor(phases.recovery / 2));
  return {
    steadyFirst: [Math.min(1, steady - 1), Math.min(1, steady - 1) + third],
    steadyLast: [steady - third, steady],
    recovered: [total - half, total],
  };
}

export interface Growth {
  first: number;
  last: number;
  change: number;
  pass: boolean;
}

/** The last value is at most `limit` times the first (p99 lag must not grow by more than 20 %). */
export function growth(first: number, last: number, limit = 1.2): Growth {
  const change = first > 0 ? last / first - 1 : last > 0 ? Infinity : 0;
  return { first, last, change: Math.round(change * 1000) / 1000, pass: last <= first * limit };
}

export interface Recovery {
  lag: Growth;
  /** Dead tuples at the end against the steady phase's last third. */
  deadBaseline: number;
  deadPeakHeld: number;
  deadAtEnd: number;
  deadRecovered: boolean;
  pass: boolean;
}

/** Slack for tiny dead-tuple counts (one autovacuum threshold of a small table). */
export const DEAD_TUPLE_SLACK = 1000;

/**
 * After the long transaction ended: the last recovery interval's p99 is within 20 % of the last
 * steady interval's before it, and the dead tuples at the end are back to at most 1.2 × the
 * largest count of the steady phase's last third (+ DEAD_TUPLE_SLACK).
 */
export function recovery(
  samples: readonly SoakSample[],
  lag: { beforeHold: number; atEnd: number },
): Recovery | null {
  const steady = samples.filter((s) => s.phase === 'steady');
  const held = samples.filter((s) => s.phase === 'held');
  const recovered = samples.filter((s) => s.phase === 'recovery');
  if (steady.length === 0 || recovered.length === 0) return null;
  const lastThird = steady.slice(steady.length - Math.max(1, Math.floor(steady.length / 3)));
  const deadBaseline = Math.max(...lastThird.map((s) => s.relations.deadTuples));
  const deadPeakHeld = Math.max(0, ...held.map((s) => s.relations.deadTuples));
  const deadAtEnd = recovered[recovered.length - 1].relations.deadTuples;
  const deadRecovered = deadAtEnd <= deadBaseline * 1.2 + DEAD_TUPLE_SLACK;
  const lagGrowth = growth(lag.beforeHold, lag.atEnd);
  return {
    lag: lagGrowth,
    deadBaseline,
    deadPeakHeld,
    deadAtEnd,
    deadRecovered,
    pass: deadRecovered && lagGrowth.pass,
  };
}
