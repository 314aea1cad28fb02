/**
 * The run ledger's own SQL: the unique insert that makes an occurrence exist once, its history,
 * and cancellation. Every statement filters by tenant_id, or works on rows the caller already
 * holds. State changes of execution (claim, fenced transitions) are the admission and
 * execution modules' statements.
 */

/**
 * The ledger insert: "exactly one logical occurrence per (schedule, revision, due instant,
 * origin)". The origin is '' for the poller's runs, so for them the key is the instant's.
 * Whatever the number of pollers racing, the unique constraint lets one insert win; the others
 * get no row back and publish nothing. The retry and start deadlines run from the planned fire
 * instant (the nominal one without a flexible window), the retry one by the database clock.
 * A run's created_at (and admitted_at, when it is created admitted) is when it came to be: the
 * transaction's clock, or its instant when the poller prepared the batch ahead and commits it
 * once the instant is reached (so a run never looks older than its instant). A run takes its schedule's target (per-target flow control
 * counts its permits by it). It is born FAILED only when admission found its target disabled
 * (target_gone).
 */
export const INSERT_OCCURRENCES = `
  INSERT INTO occurrences (
    tenant_id, schedule_id, revision, scheduled_at, scheduled_local, state, reason, trigger,
    max_attempts, retry_deadline, priority, start_deadline, fires_at, admitted_at,
    coalesced_count, coalesced_first, coalesced_last, created_at, finished_at, trace_parent,
    target_id, origin_key, idempotency_key, replay_of)
  SELECT o.tenant_id, o.schedule_id, o.revision, o.scheduled_at, o.scheduled_local, o.state,
         o.reason, o.trigger, o.max_attempts,
         greatest(now(), o.fires_at) + make_interval(secs => o.retry_deadline_seconds),
         o.priority,
         o.fires_at + make_interval(secs => o.start_deadline_seconds),
         o.fires_at,
         CASE WHEN o.admitted THEN greatest(now(), o.fires_at) END,
         o.coalesced_count, o.coalesced_first, o.coalesced_last,
         greatest(now(), o.fires_at),
         CASE WHEN o.state IN ('SKIPPED', 'FAILED') THEN greatest(now(), o.fires_at) END,
         o.trace_parent,
         (SELECT s.target_id FROM schedules s
           WHERE s.id = o.schedule_id AND s.tenant_id = o.tenant_id),
         coalesce(o.origin_key, ''), o.idempotency_key, o.replay_of
    FROM jsonb_to_recordset($1::jsonb) AS o(
      tenant_id uuid, schedule_id uuid, revision int, scheduled_at timestamptz,
      scheduled_local text, state text, reason text, trigger text, max_attempts int,
      retry_deadline_seconds int, priority smallint, start_deadline_seconds int,
      fires_at timestamptz, admitted boolean,
      coalesced_count int, coalesced_first timestamptz, coalesced_last timestamptz,
      trace_parent text, origin_key text, idempotency_key uuid, replay_of uuid)
  ON CONFLICT ON CONSTRAINT occurrences_identity_key DO NOTHING
  RETURNING id, tenant_id, schedule_id, state, scheduled_at, origin_key`;

/**
 * What cancelling does to a run, by the state it was in: a waiting run ends CANCELLED with $3 as
 * its reason; a RUNNING run only records the request (its holder sees it at its next heartbeat).
 */
const CANCEL_SET = `
     SET state = CASE WHEN state = 'RUNNING' THEN state ELSE 'CANCELLED' END,
         reason = CASE WHEN state = 'RUNNING' THEN reason ELSE $3 END,
         reason_detail = CASE WHEN state = 'RUNNING' THEN reason_detail END,
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

const RUN_COLUMNS = `
  o.id, o.tenant_id, o.schedule_id, o.revision, o.scheduled_at, o.scheduled_local, o.state,
  o.reason, o.reason_detail, o.trigger, o.attempt_count, o.max_attempts, o.fencing_token,
  o.lease_until, o.next_attempt_at, o.cancel_requested_at, o.coalesced_count, o.coalesced_first,
  o.coalesced_last, o.created_at, o.finished_at, o.priority, o.start_deadline, o.fires_at,
  o.trace_parent, coalesce(o.idempotency_key, o.id) AS idempotency_key, o.replay_of`;

/** The stored traceparents of runs $2 of tenant $1 (for the worker's spans, tracing on). */
export const SELECT_TRACE_PARENTS = `
  SELECT id, trace_parent FROM occurrences
   WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND trace_parent IS NOT NULL`;

/**
 * One run. A run waiting for its tenant's budget also says when it should start: after the
 * runs ahead of it in the tenant's waiting list (admission order), at the tenant's rate. An
 * estimate: the concurrency limit, a saturated fleet and new higher-priority runs can only make
 * it later.
 */
export const SELECT_RUN = `
  SELECT ${RUN_COLUMNS},
         CASE WHEN o.state = 'QUEUED' AND o.admitted_at IS NULL
                   AND o.reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')
              THEN now() + make_interval(secs => (
                     SELECT count(*) FROM occurrences w
                      WHERE w.tenant_id = o.tenant_id AND w.state = 'QUEUED'
                        AND w.admitted_at IS NULL
                        AND w.reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')
                        AND (w.priority, w.scheduled_at, w.id) < (o.priority, o.scheduled_at, o.id)
                   )::float8 / t.dispatch_rate_per_second)
         END AS estimated_start_at
    FROM occurrences o
    JOIN tenants t ON t.id = o.tenant_id
   WHERE o.tenant_id = $1 AND o.id = $2`;

/**
 * History, keyset-paginated in identity order: (scheduled_at, revision, origin_key), unique within
 * a schedule, a range of occurrences_identity_key (schedule_id, scheduled_at, revision,
 * origin_key) read in its own order, without a sort. The position is the stored row of the last
 * run returned, so microseconds never round away.
 * $1 tenant, $2 schedule, $3 state filter or null, $4 page size.
 */
export const LIST_RUNS_FIRST_PAGE = `
  SELECT ${RUN_COLUMNS}
    FROM occurrences o
   WHERE o.tenant_id = $1 AND o.schedule_id = $2 AND ($3::text IS NULL OR o.state = $3::text)
   ORDER BY o.scheduled_at, o.revision, o.origin_key
   LIMIT $4`;

/**
 * As LIST_RUNS_FIRST_PAGE, after the run $5. The cursor's run is read by its id alone (OFFSET 0
 * keeps the schedule's condition out, so only the primary key matches it): with the schedule's
 * condition beside it a generic plan may find it by schedule, reading the whole history.
 */
export const LIST_RUNS_AFTER = `
  SELECT ${RUN_COLUMNS}
    FROM occurrences o
   WHERE o.tenant_id = $1 AND o.schedule_id = $2 AND ($3::text IS NULL OR o.state = $3::text)
     AND (o.scheduled_at, o.revision, o.origin_key)
         > (SELECT c.scheduled_at, c.revision, c.origin_key
              FROM (SELECT x.scheduled_at, x.revision, x.origin_key, x.schedule_id
                      FROM occurrences x WHERE x.id = $5 OFFSET 0) c
             WHERE c.schedule_id = $2)
   ORDER BY o.scheduled_at, o.revision, o.origin_key
   LIMIT $4`;

/** A schedule's history exists for the tenant that owns the schedule, and only for it. */
export const SCHEDULE_EXISTS = `SELECT 1 FROM schedules WHERE tenant_id = $1 AND id = $2`;

/**
 * Tenant-wide search, keyset-paginated by (scheduled_at, id) over occurrences_tenant_search_idx,
 * after the run $13 (its stored row, so microseconds never round away). Each filter is null when
 * not given: $2 state, $3 reason, $4 schedule, $5 target (its schedule's), $6 trigger,
 * $7/$8 scheduled at in [from, to), $9/$10 finished at in [from, to), $11 run ids, $12 limit.
 */
export const SEARCH_RUNS = `
  SELECT ${RUN_COLUMNS}
    FROM occurrences o
   WHERE o.tenant_id = $1
     AND ($2::text IS NULL OR o.state = $2::text)
     AND ($3::text IS NULL OR o.reason = $3::text)
     AND ($4::uuid IS NULL OR o.schedule_id = $4::uuid)
     AND ($5::uuid IS NULL OR o.schedule_id IN (SELECT s.id FROM schedules s
                                                 WHERE s.tenant_id = $1 AND s.target_id = $5::uuid))
     AND ($6::text IS NULL OR o.trigger = $6::text)
     AND ($7::timestamptz IS NULL OR o.scheduled_at >= $7::timestamptz)
     AND ($8::timestamptz IS NULL OR o.scheduled_at < $8::timestamptz)
     AND ($9::timestamptz IS NULL OR o.finished_at >= $9::timestamptz)
     AND ($10::timestamptz IS NULL OR o.finished_at < $10::timestamptz)
     AND ($11::uuid[] IS NULL OR o.id = ANY($11::uuid[]))
     AND ($13::uuid IS NULL OR (o.scheduled_at, o.id) > (SELECT c.scheduled_at, c.id FROM occurrences c
                                                          WHERE c.id = $13::uuid AND c.tenant_id = $1))
   ORDER BY o.scheduled_at, o.id
   LIMIT $12`;

/**
 * For each of a schedule's instants $3, the run that stands for it: an active one if there is
 * one, else the latest created. SKIPPED rows are not runs here (the instant did not run). Over
 * occurrences_identity_key (schedule_id, scheduled_at, ...).
 */
export const RUNS_AT_INSTANTS = `
  SELECT DISTINCT ON (o.scheduled_at) o.scheduled_at, o.id, o.state
    FROM occurrences o
   WHERE o.tenant_id = $1 AND o.schedule_id = $2 AND o.scheduled_at = ANY($3::timestamptz[])
     AND o.state <> 'SKIPPED'
   ORDER BY o.scheduled_at, (o.state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')) DESC,
            o.created_at DESC`;

/** A schedule's active runs: those of origin $3 and the others (occurrences_active_by_schedule_idx). */
export const ACTIVE_RUNS_BY_ORIGIN = `
  SELECT count(*) FILTER (WHERE o.origin_key = $3)::int AS ours,
         count(*) FILTER (WHERE o.origin_key <> $3)::int AS others
    FROM occurrences o
   WHERE o.schedule_id = $2 AND o.tenant_id = $1 AND o.state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`;

/** The active runs of one origin (a backfill being cancelled). */
export const ACTIVE_RUN_IDS_OF_ORIGIN = `
  SELECT o.id FROM occurrences o
   WHERE o.schedule_id = $2 AND o.tenant_id = $1 AND o.origin_key = $3
     AND o.state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`;

/** How many runs of one origin are in each state (a backfill's progress). */
export const STATES_OF_ORIGIN = `
  SELECT o.state, count(*)::int AS n FROM occurrences o
   WHERE o.schedule_id = $2 AND o.tenant_id = $1 AND o.origin_key = $3
   GROUP BY o.state`;
