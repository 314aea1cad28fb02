/**
 * The attempts audit trail. Rows are appended by the claim (in the claim's transaction) and
 * ended once; an attempt is identified by (run_id, fencing_token) as well as by attempt_no,
 * because every claim raises the token and appends exactly one attempt.
 */

/** Appended in the claim's transaction: no attempt exists that its claim did not commit. */
export const INSERT_ATTEMPT = `
  INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token)
  VALUES ($1, $2, $3, $4, $5)`;

/**
 * Ends the attempt of the given fence, once: `outcome IS NULL` keeps a late writer from
 * rewriting what the holder or the sweeper already recorded.
 */
export const END_ATTEMPT = `
  UPDATE attempts
     SET ended_at = now(), outcome = $3, http_status = $4, duration_ms = $5, error = $6
   WHERE run_id = $1 AND fencing_token = $2 AND outcome IS NULL`;

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
         http_status, duration_ms, error
    FROM attempts
   WHERE tenant_id = $1 AND run_id = $2
   ORDER BY attempt_no`;
