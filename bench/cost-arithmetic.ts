/**
 * The cost of one occurrence, as arithmetic only (no I/O, unit-tested): two readings of the
 * database's counters around a measured window, divided by the runs delivered in it, and the
 * reference workload those per-run figures imply.
 */

/** Cumulative counters at one instant (see occurrence-cost.ts for where each comes from). */
export interface CostReading {
  /** CPU seconds of the postmaster and every backend/auxiliary process; null off this machine. */
  postgresCpuSeconds: number | null;
  /** pg_current_wal_lsn() as bytes since 0/0 (cluster-wide). */
  walBytes: number;
  /** pg_stat_wal, where the server has it (cluster-wide). */
  walRecords: number | null;
  walFullPageImages: number | null;
  /** Top-level statements of the database under test (pg_stat_statements calls); null without it. */
  statements: number | null;
  /** Foreign-key checks Postgres ran for those statements (RI trigger queries); null without it. */
  foreignKeyChecks: number | null;
  /** xact_commit + xact_rollback of the database under test (pg_stat_database). */
  transactions: number;
  /** Round trips made by the clients under test (the service's metric, or the bench's count). */
  roundTrips: number | null;
  /** The waits those round trips took (pipelined statements share one). */
  waits: number | null;
  /** Table + index + TOAST bytes of the project's and pg-boss's relations, by group. */
  relationBytes: RelationBytes;
}

/** Relation bytes split by what they hold. */
export interface RelationBytes {
  /** Runs and attempts (with their partitions). */
  history: number;
  /** pg-boss's schema (its job table and partitions, archive, …). */
  queue: number;
  /** Everything else of ours (schedules, due index, tenants, …). */
  other: number;
}

export interface OccurrenceCost {
  runs: number;
  seconds: number;
  perRun: {
    postgresCpuMs: number | null;
    walBytes: number;
    walRecords: number | null;
    walFullPageImages: number | null;
    statements: number | null;
    foreignKeyChecks: number | null;
    transactions: number;
    roundTrips: number | null;
    waits: number | null;
    /** Growth of all relations (history + queue + other) per run. */
    relationBytes: number;
    historyBytes: number;
    queueBytes: number;
    otherBytes: number;
    /** The service's own CPU per run (null for the bare-SQL ceiling). */
    serviceCpuMs: number | null;
  };
}

const totalBytes = (b: RelationBytes) => b.history + b.queue + b.other;

/**
 * Per-run deltas between two readings. A counter either reading lacks stays null; with no runs
 * the optional figures are null and the others 0.
 */
export function costBetween(
  start: CostReading,
  end: CostReading,
  window: { runs: number; seconds: number; serviceCpuSeconds: number | null },
): OccurrenceCost {
  const { runs } = window;
  const per = (delta: number | null) => (delta === null || runs <= 0 ? null : delta / runs);
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const cpu = diff(start.postgresCpuSeconds, end.postgresCpuSeconds);
  const zero = (v: number | null) => v ?? 0;
  return {
    runs,
    seconds: window.seconds,
    perRun: {
      postgresCpuMs: round(per(cpu === null ? null : cpu * 1000)),
      walBytes: zero(round(per(end.walBytes - start.walBytes))),
      walRecords: round(per(diff(start.walRecords, end.walRecords))),
      walFullPageImages: round(per(diff(start.walFullPageImages, end.walFullPageImages)), 3),
      statements: round(per(diff(start.statements, end.statements))),
      foreignKeyChecks: round(per(diff(start.foreignKeyChecks, end.foreignKeyChecks))),
      transactions: zero(round(per(end.transactions - start.transactions))),
      roundTrips: round(per(diff(start.roundTrips, end.roundTrips))),
      waits: round(per(diff(start.waits, end.waits))),
      relationBytes: zero(
        round(per(totalBytes(end.relationBytes) - totalBytes(start.relationBytes))),
      ),
      historyBytes: zero(round(per(end.relationBytes.history - start.relationBytes.history))),
      queueBytes: zero(round(per(end.relationBytes.queue - start.relationBytes.queue))),
      otherBytes: zero(round(per(end.relationBytes.other - start.relationBytes.other))),
      serviceCpuMs: round(
        per(window.serviceCpuSeconds === null ? null : window.serviceCpuSeconds * 1000),
      ),
    },
  };
}

/** The reference design's workload (its section 3). */
export interface ReferenceWorkload {
  averagePerSecond: number;
  peakPerSecond: number;
  historyDays: number;
  schedules: number;
  /** Days of daily summaries kept per schedule (the reasoning: a year). */
  summaryDays: number;
  /** Bytes of one daily summary row with its index share (an estimate until summaries are measured). */
  summaryRowBytes: number;
  /** Hours a finished queue job stays in pg-boss's tables before its retention deletes it. */
  queueRetentionHours: number;
  /** Share of a core one service process is planned to use (Node runs one thread of JS). */
  replicaCoreBudget: number;
}

export const REFERENCE: ReferenceWorkload = {
  averagePerSecond: 10_000,
  peakPerSecond: 30_000,
  historyDays: 7,
  schedules: 10_000_000,
  summaryDays: 365,
  summaryRowBytes: 200,
  queueRetentionHours: 1,
  replicaCoreBudget: 0.7,
};

export interface Extrapolation {
  postgresCores: { average: number; peak: number } | null;
  walMBPerSecond: { average: number; peak: number };
  walTBPerDay: number;
  storageTB: { history: number; queue: number; summaries: number; total: number };
  serviceCores: { average: number; peak: number } | null;
  serviceReplicas: { average: number; peak: number } | null;
}

/**
 * What the reference workload costs at these per-run figures, linearly: CPU and WAL scale with
 * the rate; history is what a run leaves in the run and attempt tables times the runs of the
 * retention period; the queue holds `queueRetentionHours` of jobs; summaries are one row per
 * schedule and day. Linear scaling is optimistic for Postgres (contention grows) and pessimistic
 * for the service (batches fill up at higher rates).
 */
export function extrapolate(
  cost: OccurrenceCost['perRun'],
  ref: ReferenceWorkload = REFERENCE,
): Extrapolation {
  const at = (perRun: number, rate: number) => perRun * rate;
  const both = (perRun: number, scale: number) => ({
    average: round(at(perRun, ref.averagePerSecond) * scale, 2)!,
    peak: round(at(perRun, ref.peakPerSecond) * scale, 2)!,
  });
  const runsPerDay = ref.averagePerSecond * 86_400;
  const TB = 1e12;
  const history = Math.max(0, cost.historyBytes) * runsPerDay * ref.historyDays;
  const queue =
    Math.max(0, cost.queueBytes) * ref.averagePerSecond * ref.queueRetentionHours * 3600;
  const summaries = ref.schedules * ref.summaryDays * ref.summaryRowBytes;
  const serviceCores = cost.serviceCpuMs === null ? null : both(cost.serviceCpuMs, 1 / 1000);
  return {
    postgresCores: cost.postgresCpuMs === null ? null : both(cost.postgresCpuMs, 1 / 1000),
    walMBPerSecond: both(cost.walBytes, 1 / 1e6),
    walTBPerDay: round((cost.walBytes * runsPerDay) / TB, 2)!,
    storageTB: {
      history: round(history / TB, 2)!,
      queue: round(queue / TB, 3)!,
      summaries: round(summaries / TB, 2)!,
      total: round((history + queue + summaries) / TB, 2)!,
    },
    serviceCores,
    serviceReplicas: serviceCores && {
      average: Math.ceil(serviceCores.average / ref.replicaCoreBudget),
      peak: Math.ceil(serviceCores.peak / ref.replicaCoreBudget),
    },
  };
}

/** The extrapolation as printable lines (the bench prints these; README quotes a run of them). */
export function describeExtrapolation(
  label: string,
  e: Extrapolation,
  ref: ReferenceWorkload = REFERENCE,
): string[] {
  const rate = (n: number) => n.toLocaleString('en');
  const pair = (p: { average: number; peak: number } | null, unit: string) =>
    p
      ? `${p.average}${unit} average, ${p.peak}${unit} at peak`
      : 'n/a (Postgres not on this machine)';
  const lines = [
    `at ${rate(ref.averagePerSecond)} runs/s (${rate(ref.peakPerSecond)}/s peak), ${ref.historyDays} days of history, from ${label}:`,
    `  Postgres CPU: ${pair(e.postgresCores, ' cores')}`,
    `  WAL: ${e.walMBPerSecond.average} MB/s average, ${e.walMBPerSecond.peak} MB/s at peak (${e.walTBPerDay} TB/day)`,
    `  storage: ${e.storageTB.total} TB = history ${e.storageTB.history} TB (${ref.historyDays} days of runs and attempts)` +
      ` + queue ${e.storageTB.queue} TB (${ref.queueRetentionHours} h of finished jobs)` +
      ` + summaries ${e.storageTB.summaries} TB (${rate(ref.schedules)} schedules × ${ref.summaryDays} days × ~${ref.summaryRowBytes} B, estimated)`,
  ];
  if (e.serviceCores && e.serviceReplicas) {
    lines.push(
      `  service: ${pair(e.serviceCores, ' cores')} → ${e.serviceReplicas.average} replicas average, ` +
        `${e.serviceReplicas.peak} at peak (${ref.replicaCoreBudget} core each)`,
    );
  }
  return lines;
}

function round(value: number | null, digits = 2): number | null {
  if (value === null || !Number.isFinite(value)) return null;
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}
