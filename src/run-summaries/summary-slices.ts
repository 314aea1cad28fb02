import type { RunReason, RunState } from '../run-vocabulary';
import {
  histogramOf,
  histogramPercentileMs,
  mergeHistograms,
  type LagHistogram,
} from './lag-histogram';
import type { DaySummary, LagSummary, OutcomeSummary } from './run-summary';

/**
 * A (day, state, reason) group from one source: the live rows (one slice) or the stored
 * summaries (already folded in SQL).
 */
export interface SummaryGroup {
  day: string;
  state: RunState;
  reason: RunReason | null;
  /** Slices with a lag in them: percentiles are exact only where that is 1. */
  lagSlices: number;
  runs: number;
  attempts: number;
  lagCount: number;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  histogram: LagHistogram;
}

interface Folded {
  lagSlices: number;
  runs: number;
  attempts: number;
  lagCount: number;
  lagP50Ms: number | null;
  lagP99Ms: number | null;
  lagMaxMs: number | null;
  histograms: LagHistogram[];
}

/**
 * Every day of [fromDay, toDay) (empty days too), its groups from all sources folded: counts
 * add, maxima take the maximum, percentiles are exact where one slice is all there is and read
 * from the merged histogram otherwise. A day's own lag merges its groups the same way.
 */
export function foldDays(
  fromDay: string,
  toDay: string,
  groups: readonly SummaryGroup[],
): DaySummary[] {
  const byDay = new Map<string, Map<string, { key: OutcomeKey; folded: Folded }>>();
  for (const group of groups) {
    const outcomes = byDay.get(group.day) ?? new Map();
    byDay.set(group.day, outcomes);
    const key = `${group.state}/${group.reason ?? ''}`;
    const current = outcomes.get(key);
    outcomes.set(key, {
      key: { state: group.state, reason: group.reason },
      folded: current ? fold(current.folded, group) : fold(null, group),
    });
  }
  return daysOf(fromDay, toDay).map((day) => {
    const entries = [...(byDay.get(day)?.values() ?? [])].sort((a, b) => compare(a.key, b.key));
    const outcomes: OutcomeSummary[] = entries.map(({ key, folded }) => ({
      ...key,
      runs: folded.runs,
      attempts: folded.attempts,
      lag: lagOf(folded),
    }));
    const whole = entries.map((e) => e.folded).reduce<Folded | null>(foldFolded, null);
    return {
      day,
      runs: whole?.runs ?? 0,
      attempts: whole?.attempts ?? 0,
      lag: whole ? lagOf(whole) : EMPTY_LAG,
      outcomes,
    };
  });
}

interface OutcomeKey {
  state: RunState;
  reason: RunReason | null;
}

const EMPTY_LAG: LagSummary = { count: 0, p50Ms: null, p99Ms: null, maxMs: null, exact: true };

function fold(current: Folded | null, group: SummaryGroup): Folded {
  return foldFolded(current, { ...group, histograms: [group.histogram] });
}

function foldFolded(current: Folded | null, next: Folded): Folded {
  if (!current) return next;
  return {
    lagSlices: current.lagSlices + next.lagSlices,
    runs: current.runs + next.runs,
    attempts: current.attempts + next.attempts,
    lagCount: current.lagCount + next.lagCount,
    // Percentiles do not add: kept only while one slice with lags is all there is.
    lagP50Ms: exactAfterFold(current, next, (f) => f.lagP50Ms),
    lagP99Ms: exactAfterFold(current, next, (f) => f.lagP99Ms),
    lagMaxMs: maxOf(current.lagMaxMs, next.lagMaxMs),
    histograms: [...current.histograms, ...next.histograms],
  };
}

function lagOf(folded: Folded): LagSummary {
  if (folded.lagCount === 0 || folded.lagMaxMs === null) return EMPTY_LAG;
  if (folded.lagSlices === 1 && folded.lagP50Ms !== null && folded.lagP99Ms !== null) {
    return {
      count: folded.lagCount,
      p50Ms: folded.lagP50Ms,
      p99Ms: folded.lagP99Ms,
      maxMs: folded.lagMaxMs,
      exact: true,
    };
  }
  const merged = mergeHistograms(folded.histograms);
  return {
    count: folded.lagCount,
    p50Ms: histogramPercentileMs(merged, 0.5, folded.lagMaxMs),
    p99Ms: histogramPercentileMs(merged, 0.99, folded.lagMaxMs),
    maxMs: folded.lagMaxMs,
    exact: false,
  };
}

function exactAfterFold(
  current: Folded,
  next: Folded,
  percentile: (folded: Folded) => number | null,
): number | null {
  if (current.lagSlices === 0) return percentile(next);
  if (next.lagSlices === 0) return percentile(current);
  return null;
}

function maxOf(a: number | null, b: number | null): number | null {
  if (a === null) return b;
  if (b === null) return a;
  return Math.max(a, b);
}

function compare(a: OutcomeKey, b: OutcomeKey): number {
  return a.state === b.state
    ? (a.reason ?? '').localeCompare(b.reason ?? '')
    : a.state.localeCompare(b.state);
}

/** YYYY-MM-DD of every UTC day in [fromDay, toDay). */
export function daysOf(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  const end = Date.parse(`${toDay}T00:00:00Z`);
  for (let t = Date.parse(`${fromDay}T00:00:00Z`); t < end; t += 86_400_000) {
    days.push(new Date(t).toISOString().slice(0, 10));
  }
  return days;
}

export { histogramOf };
