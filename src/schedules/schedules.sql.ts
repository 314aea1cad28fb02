/**
 * Claims an Idempotency-Key for this tenant. The primary key decides between concurrent
 * requests: the loser's INSERT waits for the winner's transaction and then inserts nothing,
 * so two requests with one key can never create two schedules.
 */
export const CLAIM_IDEMPOTENCY_KEY = `
  INSERT INTO idempotency_keys (tenant_id, key, request_sha256, schedule_id)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (tenant_id, key) DO NOTHING
  RETURNING schedule_id`;

export const READ_IDEMPOTENCY_KEY = `
  SELECT request_sha256, schedule_id FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`;

/**
 * Serialises schedule creation per tenant so the maxActiveSchedules count cannot be raced past
 * by concurrent creates. FOR NO KEY UPDATE, not FOR UPDATE: the Idempotency-Key insert before it
 * already holds a KEY SHARE lock on this row (its foreign key), which FOR UPDATE would wait on,
 * so two concurrent creates of one tenant deadlocked.
 */
export const LOCK_TENANT = `SELECT id FROM tenants WHERE id = $1 FOR NO KEY UPDATE`;

/** Counted under LOCK_TENANT, so concurrent creates cannot both see room for one more. */
export const COUNT_LIVE_SCHEDULES = `
  SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1 AND status IN ('active', 'paused')`;

/** Reads a schedule for an edit and holds it until the edit commits. */
export const LOCK_SCHEDULE = `SELECT id FROM schedules WHERE tenant_id = $1 AND id = $2 FOR UPDATE`;

/**
 * The poller locks the schedules of the entries it is dispatching. SKIP LOCKED: a schedule
 * being edited right now is left for the next round (the edit rewrites its entry anyway), and
 * the poller never waits on an edit that waits on it.
 */
export const LOCK_SCHEDULES_FOR_DISPATCH = `
  SELECT * FROM schedules WHERE id = ANY($1::uuid[]) FOR UPDATE SKIP LOCKED`;

/**
 * Moves a batch of schedules on after dispatch, each only if its revision is still the one the
 * poller dispatched (the rows are locked, so this holds; the condition says it anyway).
 */
export const ADVANCE_SCHEDULES = `
  UPDATE schedules s SET next_due_at = x.next_due_at, status = x.status, updated_at = now()
    FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, revision int, next_due_at timestamptz, status text)
   WHERE s.id = x.id AND s.revision = x.revision`;

/** Idempotency-Keys are kept 24 hours (the promise), then pruned in bounded batches. */
export const PRUNE_IDEMPOTENCY_KEYS = `
  DELETE FROM idempotency_keys
   WHERE ctid IN (
     SELECT ctid FROM idempotency_keys
      WHERE created_at < now() - interval '24 hours'
      LIMIT $1)`;

/**
 * A manual trigger reads the schedule it runs FOR SHARE: an edit that would change the revision
 * waits until the run is recorded under the revision read here. Its instant is the database's
 * now(), truncated to the millisecond (API timestamps carry milliseconds).
 */
export const LOCK_SCHEDULE_FOR_TRIGGER = `
  SELECT id, tenant_id, revision, status, timezone, retry_max_attempts, retry_deadline_seconds,
         priority, start_deadline_seconds, date_trunc('milliseconds', now()) AS db_now
    FROM schedules
   WHERE tenant_id = $1 AND id = $2
     FOR SHARE`;
