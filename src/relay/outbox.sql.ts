/**
 * The relay's repair: admitted QUEUED runs (a run waiting for its turn or for its tenant's
 * budget has no job on purpose) older than $1 seconds whose job is gone (lost publish, a job that failed out of pg-boss) or has been `active` for more
 * than $3 seconds without the run being claimed (a worker that died holding it: pg-boss itself
 * would only re-deliver at the job's expiry, 15 minutes). Publishing again is harmless: workers
 * claim the run, not the message. Locked SKIP LOCKED so relays share the work. A job names its
 * runs in `runs` (a job of an older version: `runId`). The live jobs' runs are one equality
 * away from the candidate, so the planner hashes them once (a hash anti join, which spills to
 * disk when large) rather than searching them per candidate: with 100,000 runs waiting for
 * workers, 0.5 s, where a `NOT IN` over the same list, past work_mem, did not end in 2 minutes.
 * $4 the run queues.
 */
export const FIND_ORPHANED_QUEUED_RUNS = `
  SELECT o.id, o.tenant_id, o.priority, o.scheduled_at
    FROM occurrences o
   WHERE o.state = 'QUEUED'
     AND o.admitted_at IS NOT NULL
     AND o.reason IS NULL
     AND o.created_at < now() - make_interval(secs => $1)
     AND NOT EXISTS (
       SELECT 1
         FROM pgboss.job j
         LEFT JOIN LATERAL jsonb_array_elements(j.data->'runs') AS r(run) ON true
        WHERE j.name = ANY($4::text[])
          AND (j.state IN ('created', 'retry')
               OR (j.state = 'active' AND j.started_on > now() - make_interval(secs => $3)))
          AND coalesce(r.run->>'runId', j.data->>'runId') = o.id::text)
   ORDER BY o.created_at
   LIMIT $2
   FOR UPDATE OF o SKIP LOCKED`;

/** Age of the oldest run that is ready to go but not yet started: the outbox age. */
export const OLDEST_QUEUED_AGE = `
  SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age_seconds
    FROM occurrences
   WHERE state = 'QUEUED' AND admitted_at IS NOT NULL AND reason IS NULL`;
