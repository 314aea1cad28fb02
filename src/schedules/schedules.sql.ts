import { rowById } from '../database';

/**
 * Claims Idempotency-Keys for tenant $1: $2[i] with request hash $3[i] (hex) for the schedule
 * $4[i] about to be created. The primary key decides between concurrent requests: a loser's
 * INSERT waits for the winner's transaction and then inserts nothing, so two requests with one
 * key can never create two schedules. Returns the keys this transaction claimed. In key order,
 * so two batches that share keys wait on each other in one order and never deadlock.
 */
export const CLAIM_IDEMPOTENCY_KEYS = `
  INSERT INTO idempotency_keys (tenant_id, key, request_sha256, schedule_id)
  SELECT $1::uuid, x.key, decode(x.sha256, 'hex'), x.schedule_id
    FROM unnest($2::text[], $3::text[], $4::uuid[]) AS x(key, sha256, schedule_id)
   ORDER BY x.key
  ON CONFLICT (tenant_id, key) DO NOTHING
  RETURNING key`;

export const READ_IDEMPOTENCY_KEYS = `
  SELECT key, request_sha256, schedule_id
    FROM idempotency_keys
   WHERE tenant_id = $1 AND key = ANY($2::text[])`;

/**
 * Gives back keys this transaction claimed for items it then refused (unknown target, quota):
 * the refusal writes nothing, so the client may retry the same request under the same key.
 */
export const FORGET_IDEMPOTENCY_KEYS = `
  DELETE FROM idempotency_keys WHERE tenant_id = $1 AND key = ANY($2::text[])`;

/** What a create writes of a schedule besides its tenant, revision and status. */
const NEW_SCHEDULE_COLUMNS = `
  id, name, target_id, kind, run_at, cron, timezone, dst_nonexistent, dst_repeated, start_at,
  end_at, payload, missed_run_policy, max_catch_up, overlap_policy, retry_max_attempts,
  retry_initial_delay_ms, retry_max_delay_ms, retry_deadline_seconds, priority,
  start_deadline_seconds, flexible_window_seconds, every_seconds, anchor_at, labels,
  excluded_dates, calendar_id, max_runs, pause_after_failures, late_after_seconds, next_due_at, trace_parent,
  created_by_key_id`;

/**
 * Inserts new schedules of tenant $1 from a JSON array of rows ($2) in one statement. Every new
 * schedule starts active at revision 1 (the revision its due-index entry names); the row is that
 * revision's record until the first edit (creationRevisionOf).
 */
export const INSERT_SCHEDULES = `
  INSERT INTO schedules (tenant_id, revision, status, ${NEW_SCHEDULE_COLUMNS})
  SELECT $1::uuid, 1, 'active', ${NEW_SCHEDULE_COLUMNS}
    FROM jsonb_populate_recordset(NULL::schedules, $2::jsonb)
  RETURNING *`;

/**
 * Takes back schedules this transaction just inserted and then could not admit under the quota
 * (their due-index entries are removed beside them); nobody else has seen them.
 */
export const DELETE_NEW_SCHEDULES = `
  DELETE FROM schedules WHERE tenant_id = $1 AND id = ANY($2::uuid[])`;

export const SELECT_SCHEDULES = `
  SELECT * FROM schedules WHERE tenant_id = $1 AND id = ANY($2::uuid[])`;

/** Reads a schedule for an edit and holds it until the edit commits. */
export const LOCK_SCHEDULE = `SELECT id FROM schedules WHERE tenant_id = $1 AND id = $2 FOR UPDATE`;

/**
 * What dispatch reads of a schedule (DispatchSchedule): every column but the payload (up to
 * 64 KiB of JSON, read by the claim) and the labels (the API's). A column added to schedules
 * belongs here unless dispatch has no use for it (a test holds the two lists together).
 */
export const DISPATCH_SCHEDULE_COLUMNS = `
  id, tenant_id, name, target_id, revision, status, kind, run_at, cron, timezone,
  dst_nonexistent, dst_repeated, start_at, end_at, missed_run_policy, max_catch_up,
  overlap_policy, retry_max_attempts, retry_initial_delay_ms, retry_max_delay_ms,
  retry_deadline_seconds, next_due_at, created_at, updated_at, priority, start_deadline_seconds,
  flexible_window_seconds, trace_parent, every_seconds, anchor_at, excluded_dates, calendar_id,
  max_runs, run_count, pause_after_failures, failures_counted_from, paused_reason, paused_note,
  late_after_seconds, created_by_key_id`;

/**
 * The poller locks the schedules of the entries it is dispatching. SKIP LOCKED: a schedule
 * being edited right now is left for the next round (the edit rewrites its entry anyway), and
 * the poller never waits on an edit that waits on it. Each schedule is one primary-key probe
 * (rowById) whatever the statistics a generic plan is made with: the dispatch's other
 * statements on schedules, written with a join, were planned as scans of the whole table while
 * it was small (see ADVANCE_SCHEDULES). $1 distinct schedule ids.
 */
export const LOCK_SCHEDULES_FOR_DISPATCH = `
  SELECT s.*
    FROM unnest($1::uuid[]) AS wanted(id)
   ${rowById('schedules', 's', 'wanted.id', DISPATCH_SCHEDULE_COLUMNS, { lock: 'FOR UPDATE SKIP LOCKED' })}`;

/**
 * Moves a batch of schedules on after dispatch, each only if its revision is still the one the
 * poller dispatched and it is live (the rows are locked, so this holds; the condition says it
 * anyway). run_count grows by the runs created, under the same lock, so maxRuns is exact
 * however many pollers race. Returns, per tenant, how many left the live statuses (one-time
 * schedules, and cron schedules past their last instant, complete): the slots to release in
 * this transaction, and which schedules they are. $2 (the same ids as an array) makes the rows
 * primary-key probes: a join with the JSON records alone let a generic plan hash a scan of every
 * schedule of a small table on each dispatch (2,000 read to move five). $1 the moves as a JSON
 * array, $2 their ids.
 */
export const ADVANCE_SCHEDULES = `
  WITH advanced AS (
    UPDATE schedules s SET next_due_at = x.next_due_at, status = x.status, updated_at = now(),
                           run_count = s.run_count + coalesce(x.runs, 0)
      FROM jsonb_to_recordset($1::jsonb) AS x(id uuid, revision int, next_due_at timestamptz, status text, runs int)
     WHERE s.id = ANY($2::uuid[]) AND s.id = x.id AND s.revision = x.revision
       AND s.status IN ('active', 'paused')
    RETURNING s.id, s.tenant_id, s.status)
  SELECT tenant_id, count(*)::int AS ended, array_agg(id) AS ids
    FROM advanced
   WHERE status NOT IN ('active', 'paused')
   GROUP BY tenant_id`;

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

/**
 * Schedules whose runs are about to be created outside the poller (replays, backfills), read
 * FOR SHARE like a manual trigger: an edit that would change the revision waits until the runs
 * are recorded under the revision read here.
 */
export const LOCK_SCHEDULES_FOR_RUNS = `
  SELECT * FROM schedules WHERE tenant_id = $1 AND id = ANY($2::uuid[]) FOR SHARE`;

/**
 * Schedules to auto-pause: active, with pause_after_failures set, that had a run end FAILED or
 * UNKNOWN at or after $1 (over occurrences_failed_recent_idx), and whose last
 * pause_after_failures finished runs since the count began (failures_counted_from), by
 * instant, all ended FAILED or UNKNOWN. SUCCEEDED breaks a streak; CANCELLED and SKIPPED are
 * not outcomes and do not count either way. A hint only: the pause itself is an edit under the
 * schedule's lock that re-checks it (AUTO_PAUSE_STILL_DUE), so replicas racing pause it once.
 */
export const SCHEDULES_TO_AUTO_PAUSE = `
  SELECT s.id, s.tenant_id, s.revision
    FROM schedules s
   WHERE s.id IN (SELECT DISTINCT o.schedule_id FROM occurrences o
                   WHERE o.state IN ('FAILED', 'UNKNOWN') AND o.finished_at >= $1)
     AND s.status = 'active' AND s.pause_after_failures IS NOT NULL
     AND ${streak('s')}
   LIMIT $2`;

/** The same condition for one locked schedule; returns the run ids of the streak. */
export const AUTO_PAUSE_STILL_DUE = `
  SELECT array_agg(last.id ORDER BY last.scheduled_at) AS run_ids
    FROM schedules s,
         LATERAL (SELECT o.id, o.state, o.scheduled_at FROM occurrences o
                   WHERE o.schedule_id = s.id AND o.finished_at > s.failures_counted_from
                     AND o.state IN ('FAILED', 'UNKNOWN', 'SUCCEEDED')
                   ORDER BY o.scheduled_at DESC, o.id DESC
                   LIMIT s.pause_after_failures) last
   WHERE s.id = $1 AND s.status = 'active' AND s.pause_after_failures IS NOT NULL
  HAVING count(*) FILTER (WHERE last.state IN ('FAILED', 'UNKNOWN')) = min(s.pause_after_failures)`;

function streak(s: string): string {
  return `${s}.pause_after_failures = (
    SELECT count(*) FILTER (WHERE last.state IN ('FAILED', 'UNKNOWN'))
      FROM (SELECT o.state FROM occurrences o
             WHERE o.schedule_id = ${s}.id AND o.finished_at > ${s}.failures_counted_from
               AND o.state IN ('FAILED', 'UNKNOWN', 'SUCCEEDED')
             ORDER BY o.scheduled_at DESC, o.id DESC
             LIMIT ${s}.pause_after_failures) last)`;
}
