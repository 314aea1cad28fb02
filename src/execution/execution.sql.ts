import { anyRow, inPartitionsOf, rowById } from '../database';

/**
 * Execution: a claimed run while its attempt runs and as it ends. Every change is a fenced,
 * conditional UPDATE: a lease renewal or a transition out of RUNNING happens only under the
 * fencing token the holder claimed with, so a worker that paused past its lease writes nothing.
 *
 * Partitions: each statement about known runs also takes the range of their `scheduled_at` (the
 * history's partition key; see instantBounds in database/partition-bounds.ts), so it reads and
 * writes only their partitions. The built-in worker knows its runs' instants (from the claim);
 * the HTTP worker contract does not, and passes an unbounded range (every partition, by primary
 * key). The instant never changes, so it narrows the search and never the fence: a run outside
 * the range is not a run the caller holds.
 *
 * Runs named by a batch are found by a primary-key probe each (rowById), never by a join of the
 * batch with the runs: a generic plan that expects few RUNNING runs (planned when few were)
 * joins the batch with a scan of the partial index of RUNNING runs, which holds an entry for
 * every run that was RUNNING since its last vacuum (6,883 entries and 378 pages read for a batch
 * of 92 at 1,000 runs/s; run-index-plans.spec.ts). The probes go in the batch's order: callers
 * pass runs in id order, so two batches lock the runs they share in the same order.
 */

/**
 * Renews the lease, only for the current holder: zero rows means the fence moved on (the
 * sweeper reclaimed the run, or it ended) and the caller must stop and write nothing. Reports a
 * cancel request, or a cancelled schedule, so the holder can abort cooperatively.
 * $1 run, $2 tenant, $3 fencing token, $4 lease ms, $5..$6 the run's scheduled_at range.
 */
export const HEARTBEAT = `
  UPDATE occurrences o
     SET lease_until = now() + make_interval(secs => $4::double precision / 1000),
         updated_at = now()
    FROM schedules s
   WHERE o.id = $1 AND o.tenant_id = $2 AND o.fencing_token = $3 AND o.state = 'RUNNING'
     AND o.scheduled_at >= $5::timestamptz AND o.scheduled_at < $6::timestamptz
     AND s.id = o.schedule_id
  RETURNING o.lease_until,
            (o.cancel_requested_at IS NOT NULL OR s.status = 'cancelled') AS cancel_requested`;

/**
 * The schedule locks of a batch of completions, one per schedule, taken in schedule-id order
 * (the subquery's order is the order the outer scan calls the function in) so that two batches
 * never wait on each other crosswise. The same lock a single claim takes (admission), so a
 * claim that makes a run wait for its turn and the completion that hands the turn over never
 * interleave. $1 run ids, $2..$3 their scheduled_at range.
 */
export const LOCK_SCHEDULES_OF_RUNS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM (SELECT DISTINCT schedule_id FROM occurrences
           WHERE id = ANY($1::uuid[])
             AND scheduled_at >= $2::timestamptz AND scheduled_at < $3::timestamptz
           ORDER BY schedule_id) runs_schedules`;

/**
 * What deciding a RUNNING run's next state needs, with the database clock, and whether its
 * tenant has any event subscription (one index probe: most have none, and then the run's end
 * needs no statement to record its events).
 */
const HELD_RUN_COLUMNS = `
  o.id, o.tenant_id, o.schedule_id, o.scheduled_at, o.fencing_token, o.attempt_count, o.max_attempts,
  o.retry_deadline,
  (o.cancel_requested_at IS NOT NULL OR s.status = 'cancelled') AS cancel_requested,
  s.overlap_policy, s.retry_initial_delay_ms, s.retry_max_delay_ms, now() AS db_now,
  coalesce(o.target_id, s.target_id) AS target_id,
  ${anyRow('FROM subscriptions sub WHERE sub.tenant_id = o.tenant_id')} AS subscribed`;

/**
 * Completion, step one, for reports that need the run to be decided: the runs as their holders
 * claim to hold them, locked by their probes (in the batch's order) until the transitions
 * commit. A run missing from the result has a stale fencing token (or is not RUNNING), and its
 * report is rejected. $1 run ids, $2 tenant ids, $3 fencing tokens,
 * $4..$5 their scheduled_at range.
 */
export const LOCK_HELD_RUNS = `
  SELECT ${HELD_RUN_COLUMNS}
    FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) AS h(id, tenant_id, fencing_token)
    ${rowById('occurrences', 'o', 'h.id', 'x.*', { also: inPartitionsOf('x', '$4', '$5'), lock: 'FOR UPDATE' })}
    ${rowById('schedules', 's', 'o.schedule_id', 'x.*')}
   WHERE o.tenant_id = h.tenant_id AND o.fencing_token = h.fencing_token AND o.state = 'RUNNING'`;

/**
 * The fenced transitions out of RUNNING, for completions and lease expiries alike: each only
 * under the fencing token that was read, only from RUNNING. A RETRY_WAIT run gets its next
 * attempt time from the database clock (truncated to the millisecond so the queue job published
 * for it, which carries a JavaScript Date, is never due before the run is). One row per run:
 * $1 run ids, $2 fencing tokens, $3 states, $4 reasons, $5 details, $6 retry delays ms (null
 * unless RETRY_WAIT), $7..$8 the runs' scheduled_at range (always known: read with the runs).
 * The caller holds the runs' row locks (LOCK_HELD_RUNS, LOCK_EXPIRED_LEASES), so the address
 * each probe reads is the one updated.
 */
export const TRANSITION_UNDER_FENCE = `
  WITH held AS (
    SELECT o.row_ctid, o.row_table, t.state, t.reason, t.reason_detail, t.retry_delay_ms
      FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::int[])
           AS t(id, fencing_token, state, reason, reason_detail, retry_delay_ms)
      ${rowById(
        'occurrences',
        'o',
        't.id',
        'x.fencing_token, x.state, x.ctid AS row_ctid, x.tableoid AS row_table',
        { also: inPartitionsOf('x', '$7', '$8') },
      )}
     WHERE o.fencing_token = t.fencing_token AND o.state = 'RUNNING'
  )
  UPDATE occurrences o
     SET state = t.state,
         reason = t.reason,
         reason_detail = t.reason_detail,
         next_attempt_at = CASE WHEN t.retry_delay_ms IS NULL THEN NULL
                                ELSE date_trunc('milliseconds',
                                       now() + make_interval(
                                         secs => t.retry_delay_ms::double precision / 1000))
                           END,
         lease_until = NULL,
         finished_at = CASE WHEN t.state = 'RETRY_WAIT' THEN NULL ELSE now() END,
         updated_at = now()
    FROM held t
   WHERE o.ctid = t.row_ctid AND o.tableoid = t.row_table AND ${inPartitionsOf('o', '$7', '$8')}
  RETURNING o.id, o.state, o.next_attempt_at, o.priority, o.scheduled_at`;

/**
 * Completion of attempts whose report decides the run's end by itself (a success, a failure
 * not retried, an unknown outcome: transitionOfReport), with no read of the runs first: the
 * fence is this statement's condition, so a run missing from the result was not RUNNING under
 * that token (the report is stale) and nothing was written for it. Each run is locked by its
 * probe before its fence is checked (a concurrent change, a heartbeat or a cancel request, is
 * waited for and the fence checked on what it left), then updated at the address it was locked
 * at. That lock is what the attempts' end written after this statement relies on. Returns what the
 * rest of the completion needs (the hand-over of an overlap turn, events, target signals), and
 * whether the run was written: a version committed after this statement began (the change the
 * lock waited for) is locked but not visible to its UPDATE, so such a run (`finished` false) is
 * held under its fence and unwritten, for a statement of its own (TRANSITION_UNDER_FENCE).
 * $1 run ids, $2 tenant ids, $3 fencing tokens, $4 states, $5 reasons, $6 details, $7..$8 the
 * runs' scheduled_at range (unbounded when a caller does not know an instant).
 */
export const FINISH_UNDER_FENCE = `
  WITH held AS (
    SELECT o.id, o.tenant_id, o.schedule_id, o.scheduled_at, o.fencing_token, o.attempt_count,
           coalesce(o.target_id, s.target_id) AS target_id, s.overlap_policy,
           ${anyRow('FROM subscriptions sub WHERE sub.tenant_id = o.tenant_id')} AS subscribed,
           o.row_ctid, o.row_table, t.state, t.reason, t.reason_detail
      FROM unnest($1::uuid[], $2::uuid[], $3::bigint[], $4::text[], $5::text[], $6::text[])
           AS t(id, tenant_id, fencing_token, state, reason, reason_detail)
      ${rowById('occurrences', 'o', 't.id', 'x.*, x.ctid AS row_ctid, x.tableoid AS row_table', {
        also: inPartitionsOf('x', '$7', '$8'),
        lock: 'FOR UPDATE',
      })}
      ${rowById('schedules', 's', 'o.schedule_id', 'x.target_id, x.overlap_policy')}
     WHERE o.tenant_id = t.tenant_id AND o.fencing_token = t.fencing_token AND o.state = 'RUNNING'
  ), finished AS (
    UPDATE occurrences o
       SET state = h.state,
           reason = h.reason,
           reason_detail = h.reason_detail,
           next_attempt_at = NULL,
           lease_until = NULL,
           finished_at = now(),
           updated_at = now()
      FROM held h
     WHERE o.ctid = h.row_ctid AND o.tableoid = h.row_table AND ${inPartitionsOf('o', '$7', '$8')}
    RETURNING o.id
  )
  SELECT h.id, h.tenant_id, h.schedule_id, h.scheduled_at, h.fencing_token, h.attempt_count,
         h.target_id, h.overlap_policy, h.subscribed, f.id IS NOT NULL AS finished
    FROM held h LEFT JOIN finished f ON f.id = h.id`;

/** Sweeper, step one: the tenants with expired leases, oldest expiry first (bounded). */
export const TENANTS_WITH_EXPIRED_LEASES = `
  SELECT DISTINCT tenant_id
    FROM (SELECT tenant_id FROM occurrences
           WHERE state = 'RUNNING' AND lease_until < now()
           ORDER BY lease_until
           LIMIT $1) expired`;

/**
 * Sweeper, step two (under the tenant's permit lock): a bounded batch of one tenant's expired
 * leases, locked. SKIP LOCKED: a run whose holder is completing it right now is the holder's to
 * finish. Whether its target deduplicates decides between a retry and UNKNOWN.
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
