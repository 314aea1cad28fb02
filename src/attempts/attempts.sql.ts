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
 */
export const END_ATTEMPTS = `
  UPDATE attempts a
     SET ended_at = now(), outcome = e.outcome, http_status = e.http_status,
         duration_ms = e.duration_ms, error = e.error, response_headers = e.response_headers,
         response_body = e.response_body, trace_id = coalesce(e.trace_id, a.trace_id)
    FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::int[], $5::int[], $6::text[],
                $7::jsonb[], $8::text[], $9::text[])
         AS e(run_id, fencing_token, outcome, http_status, duration_ms, error, response_headers,
              response_body, trace_id)
   WHERE a.run_id = e.run_id AND a.fencing_token = e.fencing_token AND a.outcome IS NULL
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
