/**
 * What the overlap policy needs to know per schedule: is a run active (queued and not waiting,
 * running or waiting to retry), and how many wait behind it. Served by the partial index on
 * active runs, so it stays cheap however long the history grows. $1 schedule ids, $2 the
 * waiting reason.
 */
export const ACTIVE_RUNS_BY_SCHEDULE = `
  SELECT schedule_id,
         bool_or(state <> 'QUEUED' OR reason IS DISTINCT FROM $2) AS active,
         (count(*) FILTER (WHERE state = 'QUEUED' AND reason = $2))::int AS waiting
    FROM occurrences
   WHERE schedule_id = ANY($1::uuid[]) AND state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')
   GROUP BY schedule_id`;

/**
 * The hand-over, step one. A waiting run is one the poller (or a claim) decided to hold back
 * while holding its schedule row FOR UPDATE; share-locking the row here means either that
 * waiting run is committed before NEXT_WAITING_RUN looks, or the poller sees the ended run and
 * does not make the new one wait. Either way no waiting run is forgotten.
 */
export const LOCK_SCHEDULE_SHARED = `SELECT 1 FROM schedules WHERE id = $1 FOR SHARE`;

/** The hand-over, step two: the oldest run waiting for the schedule's previous one. $2 reason. */
export const NEXT_WAITING_RUN = `
  SELECT id, tenant_id, priority, scheduled_at
    FROM occurrences
   WHERE schedule_id = $1 AND state = 'QUEUED' AND reason = $2
   ORDER BY scheduled_at, id
   LIMIT 1`;
