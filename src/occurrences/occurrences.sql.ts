import { insertAttemptsOf } from '../attempts/attempts.sql';
import { spendTokensOf, tokensNow } from '../tenants/dispatch-budget.sql';

/**
 * The run ledger's hand-written SQL for execution, history and cancellation. Every state change
 * of a run is a conditional UPDATE: a claim only from a claimable state, a completion only under
 * the current fencing token, a cancel only from a state that allows it. Every statement filters
 * by tenant_id, or by a fence that only the tenant's own claim could have produced.
 */

/**
 * Serialises, per tenant, everything that takes a run permit (claims) or reclaims one (lease
 * expiries). The claim's count of RUNNING runs is only a limit if no other claim of the tenant
 * can commit between that count and its own commit. Completions only give permits back, which
 * cannot break the limit, so they do not take it: that keeps one busy tenant's completions from
 * queueing behind its claims. Advisory rather than a row lock on tenants, so quota edits and
 * schedule creation never wait on dispatch. Lock order: tenant, then schedule, then run.
 */
export const LOCK_TENANT_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $1::text, 0))`;

/**
 * LOCK_TENANT_PERMITS for the tenants of a batched claim, in tenant-id order (the subquery's
 * order is the order the outer scan calls the function in), so batches that share tenants
 * queue rather than deadlock; a one-run claim or a sweep takes a single tenant's lock.
 * $1 tenant ids.
 */
export const LOCK_TENANTS_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || id::text, 0))
    FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS t(id) ORDER BY id) ordered`;

/**
 * Serialises, per schedule, a claim that marks a run as waiting behind a running one
 * (`buffer_one`) and the completion that hands the next waiting run its job, so a waiting run
 * can never be marked after the completion has looked for it. A single claim takes both of its
 * locks in one round trip, in lock order (tenant, then schedule). $1 run, $2 tenant.
 */
export const LOCK_TENANT_AND_SCHEDULE_OF_RUN = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $2::uuid::text, 0)),
         pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM occurrences WHERE id = $1 AND tenant_id = $2::uuid`;

/**
 * The schedule locks of a batch of completions, one per schedule, taken in schedule-id order
 * (the subquery's order is the order the outer scan calls the function in) so that two batches
 * never wait on each other crosswise. $1 run ids.
 */
export const LOCK_SCHEDULES_OF_RUNS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM (SELECT DISTINCT schedule_id FROM occurrences
           WHERE id = ANY($1::uuid[])
           ORDER BY schedule_id) runs_schedules`;

/**
 * Run `o` (of schedule `s`) may start an attempt now by the database clock: due (never early),
 * waiting (QUEUED, or RETRY_WAIT whose retry time has come), not cancelled (run or schedule),
 * within its attempts and retry deadline.
 */
const RUN_CLAIMABLE = `(o.state = 'QUEUED' OR (o.state = 'RETRY_WAIT' AND o.next_attempt_at <= now()))
       AND now() >= o.scheduled_at
       AND s.status <> 'cancelled'
       AND o.cancel_requested_at IS NULL
       AND o.attempt_count < o.max_attempts
       AND now() < o.retry_deadline`;

/**
 * What a claim writes: RUNNING under a fencing token one higher, one more attempt, a lease of
 * $4 ms from the database clock, held by worker $3.
 */
const CLAIM_SET = `SET state = 'RUNNING',
         fencing_token = o.fencing_token + 1,
         attempt_count = o.attempt_count + 1,
         lease_until = now() + make_interval(secs => $4::double precision / 1000),
         worker_id = $3,
         reason = NULL,
         next_attempt_at = NULL,
         updated_at = now()`;

/**
 * The claim, all of it in one statement, for one run or a batch of any tenants' runs. Receipt of
 * a job is not ownership, this is: a run is taken only if RUN_CLAIMABLE holds by the database
 * clock (never early) and its tenant has a permit and a rate token left; its fencing token goes
 * up, so any earlier holder's writes are rejected from now on, and its lease starts. A busy
 * worker takes its tenants' permit locks once per batch instead of once per run. Of each tenant's claimable runs it takes, oldest instant first, no more than the tenant's
 * free permits and its dispatch-rate tokens, and for a schedule whose overlap policy is not
 * `allow` one run, none if one is already RUNNING; it appends their attempts and spends their
 * tokens (the attempts' and the budget's own SQL, composed in). A run not returned is not
 * refused: the caller claims it alone and DIAGNOSE_CLAIM says why. Must run
 * after LOCK_TENANTS_PERMITS for the batch's tenants, in its own statement (its snapshot then sees
 * every claim that committed before the locks were granted).
 *
 * The UPDATE takes a run only in the row version the CTE judged (`xmin`): a concurrent change
 * (a cancel) makes a new version, and the re-check after waiting for it fails, so the run is
 * left for the one-run claim. Re-checking the state conditions instead would do the same, but
 * they match the partial indexes on waiting runs, and with statistics that lag a burst the
 * planner scanned every QUEUED run and joined it to the batch (20 ms for 50 runs) rather than
 * looking the batch up by primary key.
 * $1 run ids, $2 their tenant ids, $3 worker id, $4 lease ms.
 */
export const CLAIM_RUNS = `
  WITH batch AS (
    SELECT b.run_id, b.tenant_id FROM unnest($1::uuid[], $2::uuid[]) AS b(run_id, tenant_id)
  ), free AS (
    SELECT t.id AS tenant_id,
           t.max_concurrent_runs
           - (SELECT count(*) FROM occurrences r
               WHERE r.tenant_id = t.id AND r.state = 'RUNNING') AS permits,
           floor(${tokensNow('t.id')}) AS tokens
      FROM tenants t
     WHERE t.id IN (SELECT tenant_id FROM batch)
  ), claimable AS (
    SELECT o.id, o.xmin AS version, o.tenant_id, o.scheduled_at, s.overlap_policy,
           row_number() OVER (PARTITION BY o.schedule_id ORDER BY o.scheduled_at, o.id) AS nth
      FROM batch b
      JOIN occurrences o ON o.id = b.run_id AND o.tenant_id = b.tenant_id
      JOIN schedules s ON s.id = o.schedule_id
     WHERE ${RUN_CLAIMABLE}
       AND (s.overlap_policy = 'allow'
            OR NOT EXISTS (SELECT 1 FROM occurrences r
                            WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'))
  ), ranked AS (
    SELECT c.id, c.version, c.tenant_id,
           row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.scheduled_at, c.id) AS nth
      FROM claimable c
     WHERE c.overlap_policy = 'allow' OR c.nth = 1
  ), chosen AS (
    SELECT r.id, r.version
      FROM ranked r
      JOIN free f ON f.tenant_id = r.tenant_id
     WHERE r.nth <= least(f.permits, f.tokens)
  ), claimed AS (
    UPDATE occurrences o
    ${CLAIM_SET}
      FROM chosen c, schedules s
     WHERE o.id = c.id AND o.xmin = c.version AND s.id = o.schedule_id
    RETURNING o.id, o.tenant_id, o.schedule_id, o.fencing_token, o.attempt_count, o.lease_until,
              o.scheduled_at, s.target_id, s.payload
  ), attempts AS (${insertAttemptsOf('claimed', '$3')}
  ), spent AS (${spendTokensOf('claimed')}
  )
  SELECT * FROM claimed`;

/**
 * Why CLAIM_RUNS did not take a run: each of its conditions, read in the same transaction (so under
 * the same tenant lock). `due_at` is when a not-yet-due run becomes claimable.
 */
export const DIAGNOSE_CLAIM = `
  SELECT o.state, o.reason, o.schedule_id,
         (now() < o.scheduled_at
           OR (o.state = 'RETRY_WAIT' AND o.next_attempt_at > now())) AS not_due,
         greatest(o.scheduled_at, coalesce(o.next_attempt_at, o.scheduled_at)) AS due_at,
         s.status = 'cancelled' AS schedule_cancelled,
         o.cancel_requested_at IS NOT NULL AS cancel_requested,
         o.attempt_count >= o.max_attempts AS attempts_exhausted,
         now() >= o.retry_deadline AS deadline_passed,
         (SELECT count(*) FROM occurrences r
           WHERE r.tenant_id = o.tenant_id AND r.state = 'RUNNING') >= t.max_concurrent_runs
           AS tenant_at_capacity,
         (s.overlap_policy <> 'allow'
          AND EXISTS (SELECT 1 FROM occurrences r
                       WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'
                         AND r.id <> o.id)) AS overlapping,
         s.overlap_policy,
         now() AS db_now
    FROM occurrences o
    JOIN schedules s ON s.id = o.schedule_id
    JOIN tenants t ON t.id = o.tenant_id
   WHERE o.id = $1 AND o.tenant_id = $2`;

/**
 * Ends a run that was refused at claim and can never run (cancelled, exhausted, skipped for
 * overlap). Only from a waiting state: a run that meanwhile started or ended is left alone.
 * $3 state, $4 reason.
 */
export const END_WAITING_RUN = `
  UPDATE occurrences
     SET state = $3, reason = $4, finished_at = now(), next_attempt_at = NULL, updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state IN ('QUEUED', 'RETRY_WAIT')`;

/** Shows why a QUEUED run is still waiting (throttled, waiting for the previous run). */
export const NOTE_WAITING_REASON = `
  UPDATE occurrences SET reason = $3, updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state = 'QUEUED'`;

/**
 * Renews the lease, only for the current holder: zero rows means the fence moved on (the
 * sweeper reclaimed the run, or it ended) and the caller must stop and write nothing. Reports a
 * cancel request, or a cancelled schedule, so the holder can abort cooperatively.
 * $1 run, $2 tenant, $3 fencing token, $4 lease ms.
 */
export const HEARTBEAT = `
  UPDATE occurrences o
     SET lease_until = now() + make_interval(secs => $4::double precision / 1000),
         updated_at = now()
    FROM schedules s
   WHERE o.id = $1 AND o.tenant_id = $2 AND o.fencing_token = $3 AND o.state = 'RUNNING'
     AND s.id = o.schedule_id
  RETURNING o.lease_until,
            (o.cancel_requested_at IS NOT NULL OR s.status = 'cancelled') AS cancel_requested`;

/** What deciding a RUNNING run's next state needs, with the database clock. */
const HELD_RUN_COLUMNS = `
  o.id, o.tenant_id, o.schedule_id, o.fencing_token, o.attempt_count, o.max_attempts,
  o.retry_deadline,
  (o.cancel_requested_at IS NOT NULL OR s.status = 'cancelled') AS cancel_requested,
  s.overlap_policy, s.retry_initial_delay_ms, s.retry_max_delay_ms, now() AS db_now`;

/**
 * Completion, step one: the runs as their holders claim to hold them, locked (in id order)
 * until the transitions commit. A run missing from the result has a stale fencing token (or is
 * not RUNNING), and its report is rejected. $1 run ids, $2 tenant ids, $3 fencing tokens.
 */
export const LOCK_HELD_RUNS = `
  SELECT ${HELD_RUN_COLUMNS}
    FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) AS h(id, tenant_id, fencing_token)
    JOIN occurrences o
      ON o.id = h.id AND o.tenant_id = h.tenant_id AND o.fencing_token = h.fencing_token
    JOIN schedules s ON s.id = o.schedule_id
   WHERE o.state = 'RUNNING'
   ORDER BY o.id
     FOR UPDATE OF o`;

/**
 * The fenced transitions out of RUNNING, for completions and lease expiries alike: each only
 * under the fencing token that was read, only from RUNNING. A RETRY_WAIT run gets its next
 * attempt time from the database clock (truncated to the millisecond so the queue job published
 * for it, which carries a JavaScript Date, is never due before the run is). One row per run:
 * $1 run ids, $2 fencing tokens, $3 states, $4 reasons, $5 retry delays ms (null unless
 * RETRY_WAIT).
 */
export const TRANSITION_UNDER_FENCE = `
  UPDATE occurrences o
     SET state = t.state,
         reason = t.reason,
         next_attempt_at = CASE WHEN t.retry_delay_ms IS NULL THEN NULL
                                ELSE date_trunc('milliseconds',
                                       now() + make_interval(
                                         secs => t.retry_delay_ms::double precision / 1000))
                           END,
         lease_until = NULL,
         finished_at = CASE WHEN t.state = 'RETRY_WAIT' THEN NULL ELSE now() END,
         updated_at = now()
    FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::int[])
         AS t(id, fencing_token, state, reason, retry_delay_ms)
   WHERE o.id = t.id AND o.fencing_token = t.fencing_token AND o.state = 'RUNNING'
  RETURNING o.id, o.state, o.next_attempt_at`;

/**
 * A buffer_one schedule defers a new run (QUEUED, reason waiting_for_previous, no job) while
 * another is active; when that one ends, the oldest waiting run gets its job in the same
 * transaction, so it can never be forgotten. The schedule row is share-locked first: the poller
 * decides "waiting" holding that row FOR UPDATE, so either its waiting run is committed before
 * NEXT_WAITING_RUN looks, or the poller sees this run ended and does not make it wait.
 */
export const LOCK_SCHEDULE_SHARED = `SELECT 1 FROM schedules WHERE id = $1 FOR SHARE`;

export const NEXT_WAITING_RUN = `
  SELECT id, tenant_id
    FROM occurrences
   WHERE schedule_id = $1 AND state = 'QUEUED' AND reason = 'waiting_for_previous'
   ORDER BY scheduled_at, id
   LIMIT 1`;

/** Sweeper, step one: the tenants with expired leases, oldest expiry first (bounded). */
export const TENANTS_WITH_EXPIRED_LEASES = `
  SELECT DISTINCT tenant_id
    FROM (SELECT tenant_id FROM occurrences
           WHERE state = 'RUNNING' AND lease_until < now()
           ORDER BY lease_until
           LIMIT $1) expired`;

/**
 * Sweeper, step two (after LOCK_TENANT_PERMITS): a bounded batch of one tenant's expired leases,
 * locked. SKIP LOCKED: a run whose holder is completing it right now is the holder's to finish.
 * Whether its target deduplicates decides between a retry and UNKNOWN.
 */
export const LOCK_EXPIRED_LEASES = `
  SELECT ${HELD_RUN_COLUMNS}, coalesce(tg.deduplicates, false) AS deduplicates
    FROM occurrences o
    JOIN schedules s ON s.id = o.schedule_id
    LEFT JOIN targets tg ON tg.id = s.target_id AND tg.tenant_id = o.tenant_id
   WHERE o.tenant_id = $1 AND o.state = 'RUNNING' AND o.lease_until < now()
   ORDER BY o.lease_until
   LIMIT $2
     FOR UPDATE OF o SKIP LOCKED`;

/**
 * What cancelling does to a run, by the state it was in: a waiting run ends CANCELLED with $3 as
 * its reason; a RUNNING run only records the request (its holder sees it at its next heartbeat).
 */
const CANCEL_SET = `
     SET state = CASE WHEN state = 'RUNNING' THEN state ELSE 'CANCELLED' END,
         reason = CASE WHEN state = 'RUNNING' THEN reason ELSE $3 END,
         finished_at = CASE WHEN state = 'RUNNING' THEN finished_at ELSE now() END,
         next_attempt_at = CASE WHEN state = 'RUNNING' THEN next_attempt_at END,
         cancel_requested_at = CASE WHEN state = 'RUNNING'
                                    THEN coalesce(cancel_requested_at, now())
                                    ELSE cancel_requested_at END,
         updated_at = now()`;

/**
 * Cancel one run, in one statement so that a racing claim is either before it (the run is
 * RUNNING: only a cancel request is recorded, the holder sees it at its next heartbeat) or after
 * it (the claim finds CANCELLED and starts nothing). SET expressions read the row as it was, so
 * both branches see the same state. Final runs match nothing.
 */
export const CANCEL_RUN = `
  UPDATE occurrences
  ${CANCEL_SET}
   WHERE id = $1 AND tenant_id = $2 AND state IN ('QUEUED', 'RETRY_WAIT', 'RUNNING')
  RETURNING state, schedule_id,
            (SELECT s.overlap_policy FROM schedules s WHERE s.id = schedule_id) AS overlap_policy`;

/** The same for every active run of a cancelled schedule. */
export const CANCEL_SCHEDULE_RUNS = `
  UPDATE occurrences
  ${CANCEL_SET}
   WHERE schedule_id = $1 AND tenant_id = $2 AND state IN ('QUEUED', 'RETRY_WAIT', 'RUNNING')
  RETURNING state`;

export const RUN_COLUMNS = `
  o.id, o.tenant_id, o.schedule_id, o.revision, o.scheduled_at, o.scheduled_local, o.state,
  o.reason, o.trigger, o.attempt_count, o.max_attempts, o.fencing_token, o.lease_until,
  o.next_attempt_at, o.cancel_requested_at, o.coalesced_count, o.coalesced_first,
  o.coalesced_last, o.created_at, o.finished_at`;

export const SELECT_RUN = `
  SELECT ${RUN_COLUMNS} FROM occurrences o WHERE o.tenant_id = $1 AND o.id = $2`;

/**
 * History, keyset-paginated over occurrences_history_idx by (scheduled_at, id). The position is
 * the stored row of the last run returned, so microseconds never round away.
 * $1 tenant, $2 schedule, $3 state filter or null, $4 page size.
 */
export const LIST_RUNS_FIRST_PAGE = `
  SELECT ${RUN_COLUMNS}
    FROM occurrences o
   WHERE o.tenant_id = $1 AND o.schedule_id = $2 AND ($3::text IS NULL OR o.state = $3::text)
   ORDER BY o.scheduled_at, o.id
   LIMIT $4`;

/** As LIST_RUNS_FIRST_PAGE, after the run $5. */
export const LIST_RUNS_AFTER = `
  SELECT ${RUN_COLUMNS}
    FROM occurrences o
   WHERE o.tenant_id = $1 AND o.schedule_id = $2 AND ($3::text IS NULL OR o.state = $3::text)
     AND (o.scheduled_at, o.id) > (SELECT c.scheduled_at, c.id FROM occurrences c
                                    WHERE c.id = $5 AND c.schedule_id = $2)
   ORDER BY o.scheduled_at, o.id
   LIMIT $4`;

export const SCHEDULE_EXISTS = `SELECT 1 FROM schedules WHERE tenant_id = $1 AND id = $2`;

/**
 * A manual trigger reads the schedule it runs FOR SHARE: an edit that would change the revision
 * waits until the run is recorded under the revision read here. Its instant is the database's
 * now(), truncated to the millisecond (API timestamps carry milliseconds).
 */
export const LOCK_SCHEDULE_FOR_TRIGGER = `
  SELECT id, tenant_id, revision, status, timezone, retry_max_attempts, retry_deadline_seconds,
         date_trunc('milliseconds', now()) AS db_now
    FROM schedules
   WHERE tenant_id = $1 AND id = $2
     FOR SHARE`;
