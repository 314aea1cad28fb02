import { queryOnce } from './postgres';
import type { RunStages } from './slow-runs';

export interface StageLags {
  /** Occurrence row committed (the poller's dispatch) minus the nominal instant, ms. */
  createdP50: number;
  createdP99: number;
  /**
   * Admission (the run may take its permit and its job is published) minus the nominal instant,
   * ms; the same as created for a run admitted as it is written.
   */
  admittedP50: number;
  admittedP99: number;
  /** First attempt's claim minus the nominal instant, ms. */
  claimedP50: number;
  claimedP99: number;
}

/**
 * Each run scheduled in [from, to) with its stages against its nominal instant, ms: its row
 * created (dispatch), admitted, its first attempt claimed (null until then). `from` and `to`
 * are the caller's placeholders ($n); `extra`, more columns to select (of `o`, the run).
 * stageLags and stageTimeline both read it, so their figures are of the same runs.
 */
const runLags = (from: string, to: string, extra = '') => `
  SELECT extract(epoch FROM o.created_at - o.scheduled_at) * 1000 AS created,
         extract(epoch FROM o.admitted_at - o.scheduled_at) * 1000 AS admitted,
         extract(epoch FROM a.started_at - o.scheduled_at) * 1000 AS claimed${extra}
    FROM occurrences o
    LEFT JOIN attempts a ON a.run_id = o.id AND a.attempt_no = 1
   WHERE o.scheduled_at >= ${from} AND o.scheduled_at < ${to}`;

/**
 * Where the lag goes, from the service's own ledger: when each run's row was created (dispatch),
 * admitted and its first attempt claimed, against its nominal instant. The sink's receipt is
 * the third point; the gaps between them say which stage to look at.
 */
export async function stageLags(
  url: string,
  judged: { from: number; to: number },
): Promise<StageLags | null> {
  const [row] = await queryOnce<{
    created_p50: number | null;
    created_p99: number | null;
    admitted_p50: number | null;
    admitted_p99: number | null;
    claimed_p50: number | null;
    claimed_p99: number | null;
  }>(
    url,
    `WITH lags AS (${runLags('$1', '$2')})
       SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY created)::float8 AS created_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY created)::float8 AS created_p99,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY admitted)::float8 AS admitted_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY admitted)::float8 AS admitted_p99,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY claimed)::float8 AS claimed_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY claimed)::float8 AS claimed_p99
         FROM lags`,
    [new Date(judged.from), new Date(judged.to)],
  );
  if (!row || row.created_p50 === null || row.claimed_p50 === null) return null;
  const round = (ms: number | null) => Math.round((ms ?? 0) * 10) / 10;
  return {
    createdP50: round(row.created_p50),
    createdP99: round(row.created_p99),
    admittedP50: round(row.admitted_p50),
    admittedP99: round(row.admitted_p99),
    claimedP50: round(row.claimed_p50),
    claimedP99: round(row.claimed_p99),
  };
}

export function describeStages(s: StageLags): string {
  return (
    `stages: dispatched p50/p99 ${s.createdP50}/${s.createdP99} ms, ` +
    `admitted ${s.admittedP50}/${s.admittedP99} ms, ` +
    `claimed ${s.claimedP50}/${s.claimedP99} ms after the instant`
  );
}

/** One stretch of the quiet window (by nominal instant): its runs' stages, and the flood's work. */
export interface StageBucket {
  /** Seconds after the flood's instant where the stretch starts. */
  fromSeconds: number;
  createdP99: number;
  /** Null when none of the stretch's runs was claimed. */
  claimedP99: number | null;
  /** The flood's runs written (dispatched, admitted or waiting) during the stretch. */
  floodWritten: number;
  /** The flood's first attempts claimed during the stretch. */
  floodClaimed: number;
}

/**
 * The quiet runs' dispatch and claim lags by stretch of `bucketMs` after the flood's instant,
 * beside what the flood cost in those same stretches (its runs written and claimed): which part
 * of a flood's drain holds the quiet runs back. A run's created_at is its dispatch's clock (its
 * instant when the batch was prepared ahead), a flood run's the moment its row was written.
 */
export async function stageTimeline(
  url: string,
  window: { floodAt: number; from: number; to: number; bucketMs: number },
): Promise<StageBucket[]> {
  const bucket = (column: string) =>
    `floor(extract(epoch FROM ${column} - $1::timestamptz) * 1000 / $4)::int`;
  const rows = await queryOnce<{
    bucket: number;
    created_p99: number;
    claimed_p99: number | null;
    flood_written: number;
    flood_claimed: number;
  }>(
    url,
    `WITH quiet AS (${runLags('$2', '$3', `, ${bucket('o.scheduled_at')} AS bucket`)}
       ), stages AS (
         SELECT bucket,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY created)::float8 AS created_p99,
                percentile_cont(0.99) WITHIN GROUP (ORDER BY claimed)::float8 AS claimed_p99
           FROM quiet GROUP BY bucket
       ), written AS (
         SELECT ${bucket('o.created_at')} AS bucket, count(*)::int AS runs
           FROM occurrences o WHERE o.scheduled_at = $1::timestamptz GROUP BY 1
       ), claimed AS (
         SELECT ${bucket('a.started_at')} AS bucket, count(*)::int AS runs
           FROM occurrences o JOIN attempts a ON a.run_id = o.id AND a.attempt_no = 1
          WHERE o.scheduled_at = $1::timestamptz GROUP BY 1
       )
       SELECT s.bucket, s.created_p99, s.claimed_p99,
              coalesce(w.runs, 0) AS flood_written, coalesce(c.runs, 0) AS flood_claimed
         FROM stages s
         LEFT JOIN written w ON w.bucket = s.bucket
         LEFT JOIN claimed c ON c.bucket = s.bucket
        ORDER BY s.bucket`,
    [new Date(window.floodAt), new Date(window.from), new Date(window.to), window.bucketMs],
  );
  return rows.map((row) => ({
    fromSeconds: (row.bucket * window.bucketMs) / 1000,
    createdP99: Math.round(row.created_p99),
    claimedP99: row.claimed_p99 === null ? null : Math.round(row.claimed_p99),
    floodWritten: row.flood_written,
    floodClaimed: row.flood_claimed,
  }));
}

/**
 * "0-2 s 35/82 ms (flood 3,000 written, 1,200 claimed), ...": each stretch's dispatched and
 * claimed p99, and the flood's work in it when there is a flood.
 */
export function describeStageTimeline(buckets: readonly StageBucket[], bucketMs: number): string {
  const seconds = bucketMs / 1000;
  const count = (n: number) => n.toLocaleString('en');
  return buckets
    .map((b) => {
      const flood =
        b.floodWritten + b.floodClaimed > 0
          ? ` (flood ${count(b.floodWritten)} written, ${count(b.floodClaimed)} claimed)`
          : '';
      return `${b.fromSeconds}-${b.fromSeconds + seconds} s ${b.createdP99}/${b.claimedP99 ?? '-'} ms${flood}`;
    })
    .join(', ');
}

/**
 * The stages of each run scheduled in [from, to), from the ledger (see runLags): what
 * slowestRuns ranks by the sink's receipts.
 */
export async function runStages(
  url: string,
  window: { from: number; to: number },
): Promise<RunStages[]> {
  const rows = await queryOnce<{
    id: string;
    at: number;
    created: number;
    claimed: number | null;
  }>(url, runLags('$1', '$2', `, o.id, extract(epoch FROM o.scheduled_at) * 1000 AS at`), [
    new Date(window.from),
    new Date(window.to),
  ]);
  return rows.map((row) => ({
    id: row.id,
    atMs: Number(row.at),
    createdMs: Number(row.created),
    claimedMs: row.claimed === null ? null : Number(row.claimed),
  }));
}
