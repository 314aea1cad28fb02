import { PGBOSS_SCHEMA } from './queue.constants';

/**
 * The fetched jobs whose runs the transaction has just claimed, deleted in that transaction (its
 * last statement, behind the claim: no wait of its own). A job goes only if every run it names
 * was claimed by this transaction (the run's row version is this transaction's; a transaction
 * that wrote nothing has no id and deletes nothing), and only as it was fetched (`active`, at the
 * retry count fetched: a job pg-boss delivered again meanwhile is not touched). A job with a run
 * the claim left (one to be claimed alone: a retry waiting, a run whose schedule is busy) is
 * left to the worker's delete once that claim has been made: until then the job is the run's
 * way back if that claim cannot reach the database. Each job is found by pg-boss's primary key
 * (name, id), as pg-boss's own delete finds it, and each of its runs by a probe of its partition
 * (id and scheduled_at, which every job of this version carries; a job without them is not
 * deleted here). $1 queue names, $2 job ids, $3 each job as fetched, `name:id:retry count`.
 */
export const DELETE_JOBS_OF_CLAIMED_RUNS = `
  DELETE FROM ${PGBOSS_SCHEMA}.job j
   WHERE j.name = ANY($1::text[]) AND j.id = ANY($2::uuid[])
     AND (j.name || ':' || j.id::text || ':' || j.retry_count::text) = ANY($3::text[])
     AND j.state = 'active'
     AND NOT EXISTS (
       SELECT 1
         FROM jsonb_array_elements(coalesce(j.data->'runs', jsonb_build_array(j.data))) AS r(run)
        WHERE NOT EXISTS (
          SELECT 1 FROM occurrences o
           WHERE o.id = (r.run->>'runId')::uuid
             AND o.scheduled_at = (r.run->>'scheduledAt')::timestamptz
             AND o.xmin = pg_current_xact_id_if_assigned()::xid))
  RETURNING j.id`;
