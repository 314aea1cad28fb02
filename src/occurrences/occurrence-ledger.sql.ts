/**
 * The ledger insert: "exactly one logical occurrence per (schedule, revision, due instant)".
 * Whatever the number of pollers racing, the unique constraint lets one insert win; the others
 * get no row back and publish nothing. The retry deadline is measured from the database clock.
 * A run's created_at is when it came to be: the transaction's clock, or its instant when the
 * poller prepared the batch ahead and commits it once the instant is reached (so a run never
 * looks older than its instant).
 */
export const INSERT_OCCURRENCES = `
  INSERT INTO occurrences (
    tenant_id, schedule_id, revision, scheduled_at, scheduled_local, state, reason, trigger,
    max_attempts, retry_deadline, coalesced_count, coalesced_first, coalesced_last, created_at,
    finished_at)
  SELECT o.tenant_id, o.schedule_id, o.revision, o.scheduled_at, o.scheduled_local, o.state,
         o.reason, o.trigger, o.max_attempts,
         greatest(now(), o.scheduled_at) + make_interval(secs => o.retry_deadline_seconds),
         o.coalesced_count, o.coalesced_first, o.coalesced_last,
         greatest(now(), o.scheduled_at),
         CASE WHEN o.state = 'SKIPPED' THEN greatest(now(), o.scheduled_at) END
    FROM jsonb_to_recordset($1::jsonb) AS o(
      tenant_id uuid, schedule_id uuid, revision int, scheduled_at timestamptz,
      scheduled_local text, state text, reason text, trigger text, max_attempts int,
      retry_deadline_seconds int, coalesced_count int, coalesced_first timestamptz,
      coalesced_last timestamptz)
  ON CONFLICT ON CONSTRAINT occurrences_identity_key DO NOTHING
  RETURNING id, tenant_id, schedule_id, state, scheduled_at`;

/**
 * What the overlap policy needs to know per schedule: is a run active (queued and not waiting,
 * running or waiting to retry), and how many wait behind it. Served by the partial index on
 * active runs, so it stays cheap however long the history grows.
 */
export const ACTIVE_RUNS_BY_SCHEDULE = `
  SELECT schedule_id,
         bool_or(state <> 'QUEUED' OR reason IS DISTINCT FROM 'waiting_for_previous') AS active,
         (count(*) FILTER (WHERE state = 'QUEUED' AND reason = 'waiting_for_previous'))::int AS waiting
    FROM occurrences
   WHERE schedule_id = ANY($1::uuid[]) AND state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')
   GROUP BY schedule_id`;

/**
 * The relay's repair: QUEUED runs (not waiting behind another) older than $1 seconds whose job
 * is gone (lost publish, a job that failed out of pg-boss) or has been `active` for more than
 * $3 seconds without the run being claimed (a worker that died holding it: pg-boss itself would
 * only re-deliver at the job's expiry, 15 minutes). Publishing again is harmless:
 * workers claim the run, not the message. Locked SKIP LOCKED so relays share the work.
 */
export const FIND_ORPHANED_QUEUED_RUNS = `
  SELECT o.id, o.tenant_id
    FROM occurrences o
   WHERE o.state = 'QUEUED'
     AND o.reason IS DISTINCT FROM 'waiting_for_previous'
     AND o.created_at < now() - make_interval(secs => $1)
     AND NOT EXISTS (
       SELECT 1 FROM pgboss.job j
        WHERE j.name = 'dueline-runs'
          AND j.data->>'runId' = o.id::text
          AND (j.state IN ('created', 'retry')
               OR (j.state = 'active' AND j.started_on > now() - make_interval(secs => $3))))
   ORDER BY o.created_at
   LIMIT $2
   FOR UPDATE OF o SKIP LOCKED`;

/** Age of the oldest run that is ready to go but not yet started: the outbox age. */
export const OLDEST_QUEUED_AGE = `
  SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age_seconds
    FROM occurrences
   WHERE state = 'QUEUED' AND reason IS NULL`;
