import type { Receipt } from './sink';

/** One occurrence a system was asked to fire: a schedule and a nominal instant (epoch ms). */
export interface ExpectedOccurrence {
  scheduleId: string;
  at: number;
}

export interface LagStats {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export interface DeliveryStats {
  expected: number;
  delivered: number;
  /** Expected occurrences the sink never received within the drain. */
  undelivered: number;
  /** Of those, still held by the service (late, not lost), per its database; null if unknown. */
  pending: number | null;
  /** Undelivered and not held anywhere: lost. Equals `undelivered` when no ledger was asked. */
  lost: number;
  /** Run states of the undelivered occurrences, from the service's ledger. */
  ledger?: Record<string, number>;
  /** Requests received before their nominal instant (any attempt, any instant). */
  early: number;
  /** Extra logical runs: a runId received on attempt 1 more than once, or more than one runId
   *  for the same (schedule, instant). */
  duplicates: number;
  /** Logical occurrences received that were not asked for inside the window (wrong instants). */
  unexpected: number;
  /** Receipts with attempt > 1 (retries; legitimate after a crash). */
  retries: number;
  /** First-receipt lag of the expected occurrences, ms (receipt minus nominal instant). */
  lagMs: LagStats | null;
  /** Delivered expected occurrences per second of the window. */
  achievedPerSecond: number;
  /** Up to 10 undelivered occurrences, for diagnosis. */
  lostSample: ExpectedOccurrence[];
}

/** An occurrence's key: its schedule and nominal instant (epoch ms). */
export const occurrenceKey = (scheduleId: string, at: number) => `${scheduleId}@${at}`;

/** The key of the occurrence a receipt is for. */
export const receiptKey = (r: Receipt) => occurrenceKey(r.scheduleId, r.scheduledAt);

/**
 * When each key's first receipt came (a retry or a duplicate comes later), by `keyOf` (the
 * occurrence's, unless told).
 */
export function firstReceipts(
  receipts: readonly Receipt[],
  keyOf: (receipt: Receipt) => string = receiptKey,
): Map<string, number> {
  const first = new Map<string, number>();
  for (const r of receipts) {
    const k = keyOf(r);
    const seen = first.get(k);
    if (seen === undefined || r.receivedAt < seen) first.set(k, r.receivedAt);
  }
  return first;
}

/**
 * Judges a recording against what was asked for. Lag, loss and rate only count the expected
 * occurrences (the measured window, edges already trimmed by the caller); early and duplicate
 * checks look at every receipt, in or out of the window.
 */
export function analyze(
  receipts: readonly Receipt[],
  expected: readonly ExpectedOccurrence[],
  window: { from: number; to: number },
): DeliveryStats {
  let early = 0;
  let retries = 0;
  let duplicates = 0;
  const firstAttempts = new Map<string, number>();
  const runsByOccurrence = new Map<string, Set<string>>();
  const firstReceipt = firstReceipts(receipts);
  for (const r of receipts) {
    if (r.receivedAt < r.scheduledAt) early++;
    if (r.attempt > 1) retries++;
    if (r.attempt === 1) {
      const seen = firstAttempts.get(r.runId) ?? 0;
      if (seen >= 1) duplicates++;
      firstAttempts.set(r.runId, seen + 1);
    }
    const k = receiptKey(r);
    let runs = runsByOccurrence.get(k);
    if (!runs) runsByOccurrence.set(k, (runs = new Set()));
    if (!runs.has(r.runId)) {
      if (runs.size >= 1) duplicates++;
      runs.add(r.runId);
    }
  }

  const lags: number[] = [];
  const lostSample: ExpectedOccurrence[] = [];
  const expectedKeys = new Set<string>();
  let lost = 0;
  for (const e of expected) {
    const k = occurrenceKey(e.scheduleId, e.at);
    expectedKeys.add(k);
    const first = firstReceipt.get(k);
    if (first === undefined) {
      lost++;
      if (lostSample.length < 10) lostSample.push(e);
    } else {
      lags.push(first - e.at);
    }
  }
  let unexpected = 0;
  for (const k of firstReceipt.keys()) {
    const at = Number(k.slice(k.lastIndexOf('@') + 1));
    if (at >= window.from && at <= window.to && !expectedKeys.has(k)) unexpected++;
  }
  const seconds = Math.max(0.001, (window.to - window.from) / 1000);
  return {
    expected: expected.length,
    delivered: lags.length,
    undelivered: lost,
    pending: null,
    lost,
    early,
    duplicates,
    unexpected,
    retries,
    lagMs: lagStats(lags),
    achievedPerSecond: round(lags.length / seconds),
    lostSample,
  };
}

/**
 * Each nominal instant's first-receipt lag, apart: of a burst repeated with the service idle
 * between, the first instant meets a fresh service and each later one an idle service.
 */
export function lagByInstant(
  receipts: readonly Receipt[],
  expected: readonly ExpectedOccurrence[],
  instants: readonly number[],
): Array<{ at: number; lag: LagStats | null }> {
  return instants.map((at) => ({
    at,
    lag: analyze(
      receipts.filter((r) => r.scheduledAt === at),
      expected.filter((e) => e.at === at),
      { from: at, to: at },
    ).lagMs,
  }));
}

export function lagStats(values: number[]): LagStats | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return {
    p50: round(at(0.5)),
    p95: round(at(0.95)),
    p99: round(at(0.99)),
    max: round(sorted[sorted.length - 1]),
  };
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

/** Whether a receipt for this occurrence is in the recording now. */
export function receivedCheck(receipts: readonly Receipt[]): (e: ExpectedOccurrence) => boolean {
  return (e) => receipts.some((r) => r.scheduleId === e.scheduleId && r.scheduledAt === e.at);
}

/** The expected occurrences no receipt matches. */
export function undeliveredOf(
  receipts: readonly Receipt[],
  expected: readonly ExpectedOccurrence[],
): ExpectedOccurrence[] {
  const seen = new Set(receipts.map(receiptKey));
  return expected.filter((e) => !seen.has(occurrenceKey(e.scheduleId, e.at)));
}

/** Splits the undelivered into late (still held by the service) and lost, per its ledger. */
export function withLedger(
  stats: DeliveryStats,
  verdict: { pending: number; lost: number; states: Record<string, number> },
): DeliveryStats {
  return { ...stats, pending: verdict.pending, lost: verdict.lost, ledger: verdict.states };
}

/**
 * Runs per second while a backlog lasted: the receipts between the first second after the
 * instant (a rate bucket's burst) and the last receipt, over that span.
 */
export function drainRate(receivedAt: readonly number[], instant: number): number {
  const after = receivedAt.filter((t) => t >= instant + 1000).sort((a, b) => a - b);
  if (after.length < 2) return 0;
  return (after.length - 1) / ((after[after.length - 1] - after[0]) / 1000);
}

/** First attempts' receipts of the given schedules (one per run, however often it was retried). */
export function firstAttemptsOf(
  receipts: readonly Receipt[],
  scheduleIds: Iterable<string>,
): Receipt[] {
  const ids = new Set(scheduleIds);
  return receipts.filter((r) => r.attempt === 1 && ids.has(r.scheduleId));
}
