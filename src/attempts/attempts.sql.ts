/**
 * The attempts audit trail. Rows are appended by the claim statement itself (admission's
 * CLAIM_RUNS: no attempt exists that its claim did not commit) and ended once here; an attempt is identified by (run_id, fencing_token) as well as by attempt_no,
 * because every claim raises the token and appends exactly one attempt.
 */

/**
 * Ends the attempts of the given fences, each once: `outcome IS NULL` keeps a late writer from
 * rewriting what the holder or the sweeper already recorded. One row per attempt in the arrays.
 * $1 run ids, $2 fencing tokens, $3 outcomes, $4 HTTP statuses, $5 durations ms, $6 errors,
 * $7 response headers (jsonb), $8 response body excerpts, $9 trace ids, $10..$11 the runs'
 * scheduled_at range (an attempt carries its run's: only their partitions are touched).
 *
 * Each run's attempts are found by a probe of the primary key's leading column (run_id) alone,
 * in a subquery no other condition is pushed into (OFFSET 0), and updated at the row address
 * that probe read (ctid, tableoid for the partition: a TID probe), so no access path depends on
 * the statistics its cached generic plan was made with. The plain join, planned while the
 * history was empty, read the whole of its range of attempts for every batch (every attempt of
 * the day's partition in a batch of runs of one instant: 3,010 rows for 10 in
 * run-index-plans.spec.ts). The caller holds the runs' row locks (completion, sweep: taken by a
 * read under the fence, or by the fenced transition written before this statement), so no one
 * else changes these attempts meanwhile; the attempt of a run whose fence moved on has already
 * ended (only a completion or the sweeper moves a run out of RUNNING, and each ends its attempt),
 * so it is left alone (not `outcome IS NULL`). A row changed all the same has a new address and
 * is left as that change left it (every change ends it).
 */
export const END_ATTEMPTS = `
  WITH ended AS (
    SELECT a.row_ctid, a.row_table, e.outcome, e.http_status, e.duration_ms, e.error,
           e.response_headers, e.response_body, e.trace_id
      FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::int[], $5::int[], $6::text[],
                  $7::jsonb[], $8::text[], $9::text[])
           AS e(run_id, fencing_token, outcome, http_status, duration_ms, error, response_headers,
                response_body, trace_id)
     CROSS JOIN LATERAL (SELECT x.ctid AS row_ctid, x.tableoid AS row_table, x.fencing_token,
                                x.outcome
                           FROM attempts x
                          WHERE x.run_id = e.run_id
                            AND x.scheduled_at >= $10::timestamptz
                            AND x.scheduled_at < $11::timestamptz
                         OFFSET 0) a
     WHERE a.fencing_token = e.fencing_token AND a.outcome IS NULL
  )
  UPDATE attempts a
     SET ended_at = now(), outcome = e.outcome, http_status = e.http_status,
         duration_ms = e.duration_ms, error = e.error, response_headers = e.response_headers,
         response_body = e.response_body, trace_id = coalesce(e.trace_id, a.trace_id)
    FROM ended e
   WHERE a.ctid = e.row_ctid AND a.tableoid = e.row_table AND a.outcome IS NULL
     AND a.scheduled_at >= $10::timestamptz AND a.scheduled_at < $11::timestamptz`;

/**
 * Notes a completion rejected by the fence on the attempt it came from. A lease the sweeper
 * already took is overwritten: the late report says more (the worker came back, and what the
 * target answered it) than "lease lost" did. Final outcomes are never rewritten.
 */
export const MARK_ATTEMPT_STALE = `
  UPDATE attempts
     SET outcome = 'stale', ended_at = coalesce(ended_at, now()),
         http_status = coalesce($4, http_status), error = $5
   WHERE tenant_id = $1 AND run_id = $2 AND fencing_token = $3
     AND (outcome IS NULL OR outcome = 'lease_lost')`;

export const LIST_ATTEMPTS = `
  SELECT run_id, attempt_no, worker_id, fencing_token, started_at, ended_at, outcome,
         http_status, duration_ms, error, response_headers, response_body, trace_id
    FROM attempts
   WHERE tenant_id = $1 AND run_id = $2
   ORDER BY attempt_no`;
