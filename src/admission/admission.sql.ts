/**
 * Admission: which waiting runs may start now, and starting them. A run starts only if it is
 * due by the database clock (never early), still wanted, within its attempts and deadline, its
 * tenant has a permit (maxConcurrentRuns) and a rate token (dispatchRatePerSecond), and its
 * schedule's overlap policy allows it. Every statement filters by tenant_id.
 *
 * The tenant's dispatch rate is a token bucket per tenant in tenant_dispatch_budget, shared by
 * every replica: tokens refill continuously at dispatch_rate_per_second, capped at one second's
 * worth; a tenant without a bucket yet has a full one.
 */

/**
 * Serialises, per tenant, everything that takes a run permit (claims). The claim's count of
 * RUNNING runs is only a limit if no other claim of the tenant can commit between that count
 * and its own commit. Completions and lease expiries only give permits back, which cannot break
 * the limit, so they do not take it: one busy tenant's completions never queue behind its
 * claims. Advisory rather than a row lock on tenants, so quota edits and schedule creation never
 * wait on dispatch. Lock order: tenant, then schedule, then run.
 *
 * For the tenants of a batched claim, in tenant-id order (the subquery's order is the order the
 * outer scan calls the function in), so batches that share tenants queue rather than deadlock.
 * $1 tenant ids.
 */
export const LOCK_TENANTS_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || id::text, 0))
    FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS t(id) ORDER BY id) ordered`;

/**
 * A single claim's locks, in one round trip and in lock order: the tenant's permits, then the
 * run's schedule. The schedule lock serialises a claim that makes a run wait behind a running
 * one (`buffer_one`) with the completion that hands the turn over (see the overlap module), so
 * a waiting run can never be marked after the hand-over has looked for it. $1 run, $2 tenant.
 */
export const LOCK_TENANT_AND_SCHEDULE_OF_RUN = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $2::uuid::text, 0)),
         pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM occurrences WHERE id = $1 AND tenant_id = $2::uuid`;

/** The same as LOCK_TENANTS_PERMITS for one tenant (a claim of a run that does not exist). */
export const LOCK_TENANT_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $1::text, 0))`;

/** The tokens tenant `tenant` (a SQL expression of this module's statements) has now. */
const tokensNow = (tenant: string) => `
  (SELECT coalesce(
            (SELECT least(bt.dispatch_rate_per_second,
                          bb.tokens + extract(epoch FROM clock_timestamp() - bb.refilled_at)
                                      * bt.dispatch_rate_per_second)
               FROM tenant_dispatch_budget bb WHERE bb.tenant_id = bt.id),
            bt.dispatch_rate_per_second)::float8
     FROM tenants bt WHERE bt.id = ${tenant})`;

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
 * The claim, all of it in one statement, for one run or a batch of any tenants' runs. Receipt of
 * a job is not ownership, this is: a run is taken only if RUN_CLAIMABLE holds and its tenant has
 * a permit and a rate token left; its fencing token goes up, so any earlier holder's writes are
 * rejected from now on, and its lease starts. Of each tenant's claimable runs it takes, oldest
 * instant first, no more than the tenant's free permits and tokens, and for a schedule whose
 * overlap policy does not allow concurrent runs ($5) one run, none if one is already RUNNING.
 *
 * In the same statement it appends each claimed run's attempt (so no attempt exists that its
 * claim did not commit; the attempts module ends them) and spends the tokens: the bucket row is
 * inserted full minus the spend, so on conflict `rate - EXCLUDED.tokens` is the spend, taken
 * from the existing bucket refilled up to now.
 *
 * A run not returned is not refused: the caller claims it alone and DIAGNOSE_CLAIM says why.
 * Must run after LOCK_TENANTS_PERMITS for the batch's tenants, in its own statement (its
 * snapshot then sees every claim that committed before the locks were granted).
 *
 * The UPDATE takes a run only in the row version the CTE judged (`xmin`): a concurrent change
 * (a cancel) makes a new version, and the re-check after waiting for it fails, so the run is
 * left for the one-run claim. Re-checking the state conditions instead would do the same, but
 * they match the partial indexes on waiting runs, and with statistics that lag a burst the
 * planner scanned every QUEUED run and joined it to the batch (20 ms for 50 runs) rather than
 * looking the batch up by primary key.
 * $1 run ids, $2 their tenant ids, $3 worker id, $4 lease ms, $5 concurrent overlap policies.
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
    SELECT o.id, o.xmin AS version, o.tenant_id, o.scheduled_at,
           s.overlap_policy = ANY($5::text[]) AS concurrent,
           row_number() OVER (PARTITION BY o.schedule_id ORDER BY o.scheduled_at, o.id) AS nth
      FROM batch b
      JOIN occurrences o ON o.id = b.run_id AND o.tenant_id = b.tenant_id
      JOIN schedules s ON s.id = o.schedule_id
     WHERE ${RUN_CLAIMABLE}
       AND (s.overlap_policy = ANY($5::text[])
            OR NOT EXISTS (SELECT 1 FROM occurrences r
                            WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'))
  ), ranked AS (
    SELECT c.id, c.version, c.tenant_id,
           row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.scheduled_at, c.id) AS nth
      FROM claimable c
     WHERE c.concurrent OR c.nth = 1
  ), chosen AS (
    SELECT r.id, r.version
      FROM ranked r
      JOIN free f ON f.tenant_id = r.tenant_id
     WHERE r.nth <= least(f.permits, f.tokens)
  ), claimed AS (
    UPDATE occurrences o
       SET state = 'RUNNING',
           fencing_token = o.fencing_token + 1,
           attempt_count = o.attempt_count + 1,
           lease_until = now() + make_interval(secs => $4::double precision / 1000),
           worker_id = $3,
           reason = NULL,
           reason_detail = NULL,
           next_attempt_at = NULL,
           updated_at = now()
      FROM chosen c, schedules s
     WHERE o.id = c.id AND o.xmin = c.version AND s.id = o.schedule_id
    RETURNING o.id, o.tenant_id, o.schedule_id, o.fencing_token, o.attempt_count, o.lease_until,
              o.scheduled_at, s.target_id, s.payload
  ), attempts AS (
    INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token)
    SELECT c.id, c.attempt_count, c.tenant_id, $3, c.fencing_token FROM claimed c
  ), spent AS (
    INSERT INTO tenant_dispatch_budget AS b (tenant_id, tokens, refilled_at)
    SELECT bt.id, bt.dispatch_rate_per_second - n.spent, clock_timestamp()
      FROM (SELECT tenant_id, count(*) AS spent FROM claimed GROUP BY tenant_id) n
      JOIN tenants bt ON bt.id = n.tenant_id
    ON CONFLICT (tenant_id) DO UPDATE
       SET tokens = (SELECT least(bt.dispatch_rate_per_second,
                                  b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                             * bt.dispatch_rate_per_second)
                              - (bt.dispatch_rate_per_second - EXCLUDED.tokens)
                       FROM tenants bt WHERE bt.id = b.tenant_id),
           refilled_at = clock_timestamp()
  )
  SELECT * FROM claimed`;

/**
 * Why CLAIM_RUNS did not take a run: each of its conditions, read in the same transaction (so
 * under the same tenant lock). `due_at` is when a not-yet-due run becomes claimable, `rate_wait_ms`
 * how long until the tenant has a whole token. $3 concurrent overlap policies.
 */
export const DIAGNOSE_CLAIM = `
  SELECT o.state, o.reason, o.reason_detail, o.schedule_id,
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
         (NOT (s.overlap_policy = ANY($3::text[]))
          AND EXISTS (SELECT 1 FROM occurrences r
                       WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'
                         AND r.id <> o.id)) AS overlapping,
         s.overlap_policy,
         greatest(0, (1 - ${tokensNow('o.tenant_id')}) / t.dispatch_rate_per_second * 1000)::float8
           AS rate_wait_ms,
         now() AS db_now
    FROM occurrences o
    JOIN schedules s ON s.id = o.schedule_id
    JOIN tenants t ON t.id = o.tenant_id
   WHERE o.id = $1 AND o.tenant_id = $2`;

/**
 * Ends a run that was refused at claim and can never run (cancelled, exhausted, skipped for
 * overlap). Only from a waiting state: a run that meanwhile started or ended is left alone.
 * $3 state, $4 reason, $5 detail.
 */
export const END_WAITING_RUN = `
  UPDATE occurrences
     SET state = $3, reason = $4, reason_detail = $5, finished_at = now(), next_attempt_at = NULL,
         updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state IN ('QUEUED', 'RETRY_WAIT')`;

/** Shows why a QUEUED run is still waiting (throttled, waiting for the previous run). */
export const NOTE_WAITING_REASON = `
  UPDATE occurrences SET reason = $3, updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state = 'QUEUED'`;
