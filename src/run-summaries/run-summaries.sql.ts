import { RUN_STATES, ACTIVE_RUN_STATES } from '../run-vocabulary';
import { LAG_BUCKET_COUNT, LAG_BUCKETS_PER_DOUBLING } from './lag-histogram';

/** Final states: the only runs a summary counts (an active run stays a row until it ends). */
const FINAL_STATES = RUN_STATES.filter((state) => !ACTIVE_RUN_STATES.includes(state))
  .map((state) => `'${state}'`)
  .join(', ');

/**
 * Due-to-start lag of a run, in whole ms: its first attempt's start (the claim's now()) minus
 * its fires_at (the instant it was due: the planned fire instant inside a flexible window, else
 * the nominal scheduled_at). Only for runs the poller or a manual trigger made: a replay or a
 * backfill is late on purpose. Null without a first attempt. Never negative (a claim never
 * starts a run before fires_at; the floor guards clock rounding).
 */
const LAG_MS = `
  CASE WHEN o.trigger IN ('schedule', 'manual') AND a.started_at IS NOT NULL
       THEN greatest(0, floor(extract(epoch FROM a.started_at - o.fires_at) * 1000))::bigint END`;

/** The histogram bucket of lag_ms (see lag-histogram.ts); the same in every statement. */
const LAG_BUCKET = `
  CASE WHEN lag_ms < 1 THEN 0
       ELSE least(${LAG_BUCKET_COUNT - 1},
                  1 + floor(${LAG_BUCKETS_PER_DOUBLING} * log(2::numeric, lag_ms::numeric))::int)
  END`;

/**
 * Per (schedule, UTC day, state, reason) of the runs in `runs`: counts, exact lag p50/p99/max
 * and the sparse histogram. Appended to a `WITH runs AS (…)` that yields tenant_id,
 * schedule_id, day, state, reason, attempt_count and lag_ms.
 */
const GROUPED = `
  per_bucket AS (
    SELECT schedule_id, day, state, reason, ${LAG_BUCKET} AS bucket, count(*)::int AS n
      FROM runs WHERE lag_ms IS NOT NULL
     GROUP BY 1, 2, 3, 4, 5),
  histograms AS (
    SELECT schedule_id, day, state, reason,
           array_agg(bucket::smallint ORDER BY bucket) AS lag_buckets,
           array_agg(n ORDER BY bucket) AS lag_bucket_counts
      FROM per_bucket GROUP BY 1, 2, 3, 4),
  grouped AS (
    SELECT tenant_id, schedule_id, day, state, reason, count(*)::int AS runs,
           coalesce(sum(attempt_count), 0)::int AS attempts, count(lag_ms)::int AS lag_count,
           percentile_disc(0.5) WITHIN GROUP (ORDER BY lag_ms) AS lag_p50_ms,
           percentile_disc(0.99) WITHIN GROUP (ORDER BY lag_ms) AS lag_p99_ms,
           max(lag_ms) AS lag_max_ms
      FROM runs GROUP BY 1, 2, 3, 4, 5),
  summaries AS (
    SELECT g.*, coalesce(h.lag_buckets, '{}') AS lag_buckets,
           coalesce(h.lag_bucket_counts, '{}') AS lag_bucket_counts
      FROM grouped g
      LEFT JOIN histograms h
        ON h.schedule_id = g.schedule_id AND h.day = g.day AND h.state = g.state
       AND h.reason IS NOT DISTINCT FROM g.reason)`;

/** A run row as GROUPED reads it. */
const RUN_FIELDS = `
  o.tenant_id, o.schedule_id, (o.scheduled_at AT TIME ZONE 'UTC')::date AS day, o.state,
  o.reason, o.attempt_count, ${LAG_MS} AS lag_ms`;

/**
 * Takes the range [$1, $2) in the ledger. Invariant: a range is summarised once: a repeat
 * returns nothing (the caller then writes nothing), and a range overlapping another one fails
 * on the exclusion constraint, so the caller's transaction (and the partition drop in it) rolls
 * back rather than count a run twice.
 */
export const CLAIM_RANGE = `
  INSERT INTO run_summary_ranges (range_from, range_to, runs)
  VALUES ($1, $2, 0)
  ON CONFLICT (range_from, range_to) DO NOTHING
  RETURNING range_from`;

/**
 * Summarises the runs (and their first attempts) whose scheduled_at is in [$1, $2) and that
 * are final, in one statement, and records on the ledger how many it counted. Runs still
 * QUEUED, RUNNING or RETRY_WAIT are not counted: they stay rows (never dropped) and are counted
 * from the rows, so a run is in a summary or a row, never both. Only after CLAIM_RANGE
 * returned the range, in the same transaction.
 */
export const SUMMARISE_RANGE = `
  WITH runs AS (
    SELECT ${RUN_FIELDS}
      FROM occurrences o
      LEFT JOIN attempts a ON a.run_id = o.id AND a.scheduled_at = o.scheduled_at AND a.attempt_no = 1
     WHERE o.scheduled_at >= $1 AND o.scheduled_at < $2 AND o.state IN (${FINAL_STATES})),
  ${GROUPED},
  written AS (
    INSERT INTO run_summaries
      (tenant_id, schedule_id, day, slice_from, state, reason, runs, attempts, lag_count,
       lag_p50_ms, lag_p99_ms, lag_max_ms, lag_buckets, lag_bucket_counts)
    SELECT tenant_id, schedule_id, day, $1, state, reason, runs, attempts, lag_count,
           lag_p50_ms, lag_p99_ms, lag_max_ms, lag_buckets, lag_bucket_counts
      FROM summaries
    RETURNING runs)
  UPDATE run_summary_ranges
     SET runs = (SELECT coalesce(sum(runs), 0) FROM written)
   WHERE range_from = $1 AND range_to = $2
  RETURNING runs`;

/**
 * One schedule's runs still kept as rows, days [$3, $4) (UTC dates), grouped as a summary
 * would be: every state, so runs still active count too. Bounded by the schedule and the range
 * (the caller caps it at MAX_SUMMARY_DAYS) through occurrences_identity_key (schedule_id,
 * scheduled_at, ...). Tenant-scoped.
 */
export const LIVE_SUMMARIES = `
  WITH runs AS (
    SELECT ${RUN_FIELDS}
      FROM occurrences o
      LEFT JOIN attempts a ON a.run_id = o.id AND a.scheduled_at = o.scheduled_at AND a.attempt_no = 1
     WHERE o.tenant_id = $1 AND o.schedule_id = $2
       AND o.scheduled_at >= ($3::date)::timestamp AT TIME ZONE 'UTC'
       AND o.scheduled_at < ($4::date)::timestamp AT TIME ZONE 'UTC'),
  ${GROUPED}
  SELECT to_char(day, 'YYYY-MM-DD') AS day, state, reason,
         (lag_count > 0)::int AS lag_slices, runs, attempts, lag_count, lag_p50_ms,
         lag_p99_ms, lag_max_ms, lag_buckets, lag_bucket_counts
    FROM summaries`;

/**
 * One schedule's summarised slices, days [$3, $4), folded per (day, state, reason) in the
 * database so the answer is at most a row per day and outcome however thin the slices were:
 * counts and histograms add up, the maximum is the maximum, and the exact percentiles are
 * passed on only where a single slice with lags makes them exact. Tenant-scoped; through
 * run_summaries_schedule_day_idx.
 */
export const STORED_SUMMARIES = `
  WITH slices AS (
    SELECT day, state, reason, runs, attempts, lag_count, lag_p50_ms, lag_p99_ms, lag_max_ms,
           lag_buckets, lag_bucket_counts
      FROM run_summaries
     WHERE tenant_id = $1 AND schedule_id = $2 AND day >= $3::date AND day < $4::date),
  buckets AS (
    SELECT s.day, s.state, s.reason, b.bucket, sum(b.n)::int AS n
      FROM slices s, unnest(s.lag_buckets, s.lag_bucket_counts) AS b(bucket, n)
     GROUP BY 1, 2, 3, 4),
  histograms AS (
    SELECT day, state, reason, array_agg(bucket ORDER BY bucket) AS lag_buckets,
           array_agg(n ORDER BY bucket) AS lag_bucket_counts
      FROM buckets GROUP BY 1, 2, 3),
  grouped AS (
    SELECT day, state, reason, count(*) FILTER (WHERE lag_count > 0)::int AS lag_slices,
           sum(runs)::int AS runs, sum(attempts)::int AS attempts,
           sum(lag_count)::int AS lag_count,
           CASE WHEN count(*) FILTER (WHERE lag_count > 0) = 1 THEN max(lag_p50_ms) END
             AS lag_p50_ms,
           CASE WHEN count(*) FILTER (WHERE lag_count > 0) = 1 THEN max(lag_p99_ms) END
             AS lag_p99_ms,
           max(lag_max_ms) AS lag_max_ms
      FROM slices GROUP BY 1, 2, 3)
  SELECT to_char(g.day, 'YYYY-MM-DD') AS day, g.state, g.reason, g.lag_slices, g.runs, g.attempts,
         g.lag_count, g.lag_p50_ms, g.lag_p99_ms, g.lag_max_ms,
         coalesce(h.lag_buckets, '{}') AS lag_buckets,
         coalesce(h.lag_bucket_counts, '{}') AS lag_bucket_counts
    FROM grouped g
    LEFT JOIN histograms h
      ON h.day = g.day AND h.state = g.state AND h.reason IS NOT DISTINCT FROM g.reason`;
