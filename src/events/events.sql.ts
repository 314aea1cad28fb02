/**
 * The event outbox. Every RECORD_* statement runs in the transaction of the state change it
 * reports, reads the changed rows as that transaction sees them, and writes one row per
 * subscription of the tenant that names the type, joined in the same statement: a tenant
 * without subscriptions writes nothing and pays one index probe per statement. Event ids are
 * derived from what happened (type and run, schedule revision), so recording a change twice
 * writes it once (ON CONFLICT DO NOTHING).
 */

import { rowById } from '../database';

/** An instant as JSON text in UTC with milliseconds, like the API's. */
const iso = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

const RUN_DATA = `
  'runId', o.id, 'scheduleId', o.schedule_id, 'targetId', o.target_id, 'revision', o.revision,
  'trigger', o.trigger, 'state', o.state, 'reason', o.reason,
  'reasonDetail', left(o.reason_detail, 1000), 'attemptCount', o.attempt_count,
  'scheduledAt', ${iso('o.scheduled_at')}, 'firesAt', ${iso('o.fires_at')},
  'finishedAt', ${iso('o.finished_at')}`;

/**
 * Runs that ended (SUCCEEDED, FAILED, UNKNOWN) or were recorded SKIPPED, as their change left
 * them: run.succeeded, run.failed, run.unknown, occurrence.skipped (with its reason code).
 * Other states write nothing. $1 run ids.
 */
export const RECORD_RUN_EVENTS = `
  INSERT INTO events (id, subscription_id, tenant_id, target_id, type, data)
  SELECT md5(e.type || ':' || o.id::text)::uuid, s.id, o.tenant_id, s.target_id, e.type,
         jsonb_build_object(${RUN_DATA})
    FROM occurrences o
   CROSS JOIN LATERAL (SELECT CASE o.state WHEN 'SUCCEEDED' THEN 'run.succeeded'
                                           WHEN 'FAILED' THEN 'run.failed'
                                           WHEN 'UNKNOWN' THEN 'run.unknown'
                                           WHEN 'SKIPPED' THEN 'occurrence.skipped' END AS type) e
    JOIN subscriptions s ON s.tenant_id = o.tenant_id AND e.type = ANY(s.event_types)
   WHERE o.id = ANY($1::uuid[]) AND e.type IS NOT NULL
  ON CONFLICT DO NOTHING`;

/**
 * Runs claimed for their first attempt later than their planned fire instant plus their
 * schedule's late_after_seconds: run.late, once per run. A fragment of the claim's own statement
 * (a data-modifying CTE of CLAIM_RUNS and CLAIM_ADMITTED_RUNS), so the claim and its event are
 * written together and the claim's transaction needs no second statement, and no wait for the
 * claim's answer, to record it. `claimed`: a relation of the runs as the claim left them, with
 * the columns RUN_DATA reads; its clock is the claim's. Each schedule is a probe (rowById).
 */
export const lateStartEventsOf = (claimed: string) => `
  INSERT INTO events (id, subscription_id, tenant_id, target_id, type, data)
  SELECT md5('run.late:' || o.id::text)::uuid, s.id, o.tenant_id, s.target_id, 'run.late',
         jsonb_build_object(${RUN_DATA},
           'startedAt', ${iso('now()')},
           'lateBySeconds', round(extract(epoch FROM now() - o.fires_at)::numeric, 3),
           'lateAfterSeconds', sc.late_after_seconds)
    FROM ${claimed} o
    ${rowById('schedules', 'sc', 'o.schedule_id', 'x.late_after_seconds', {
      also: 'x.late_after_seconds IS NOT NULL',
    })}
    JOIN subscriptions s ON s.tenant_id = o.tenant_id AND 'run.late' = ANY(s.event_types)
   WHERE o.state = 'RUNNING' AND o.attempt_count = 1
     AND now() > o.fires_at + make_interval(secs => sc.late_after_seconds)
  ON CONFLICT DO NOTHING`;

/**
 * A schedule paused by the edit of this transaction (by request or auto-pause): its reason and
 * note. One event per paused revision. $1 tenant, $2 schedule.
 */
export const RECORD_SCHEDULE_PAUSED = `
  INSERT INTO events (id, subscription_id, tenant_id, target_id, type, data)
  SELECT md5('schedule.paused:' || sc.id::text || ':' || sc.revision)::uuid, s.id,
         sc.tenant_id, s.target_id, 'schedule.paused',
         jsonb_build_object('scheduleId', sc.id, 'name', sc.name, 'revision', sc.revision,
                            'reason', sc.paused_reason, 'note', sc.paused_note,
                            'pausedAt', ${iso('now()')})
    FROM schedules sc
    JOIN subscriptions s ON s.tenant_id = sc.tenant_id AND 'schedule.paused' = ANY(s.event_types)
   WHERE sc.id = $2 AND sc.tenant_id = $1 AND sc.status = 'paused'
  ON CONFLICT DO NOTHING`;

/**
 * A target disabled by this transaction (410 Gone, or by request): its reason. One event id
 * for all subscriptions. $1 tenant, $2 target.
 */
export const RECORD_TARGET_DISABLED = `
  WITH event AS (SELECT gen_random_uuid() AS id)
  INSERT INTO events (id, subscription_id, tenant_id, target_id, type, data)
  SELECT event.id, s.id, tg.tenant_id, s.target_id, 'target.disabled',
         jsonb_build_object('targetId', tg.id, 'name', tg.name, 'reason', tg.disabled_reason,
                            'disabledAt', ${iso('now()')})
    FROM event, targets tg
    JOIN subscriptions s ON s.tenant_id = tg.tenant_id AND 'target.disabled' = ANY(s.event_types)
   WHERE tg.id = $2 AND tg.tenant_id = $1 AND tg.status = 'disabled'
  ON CONFLICT DO NOTHING`;

/**
 * Claims due pending deliveries for one attempt each: at most $1, at most $2 per target (so one
 * tenant's slow or failing endpoint cannot take every slot of a round), oldest due first, rows
 * another deliverer holds skipped. The claim moves next_attempt_at on by the lease ($3 ms): a
 * deliverer that dies mid-call leaves its row to come due again, never lost. `attempts` is the
 * claimed attempt's number, which fences its report.
 */
export const CLAIM_DUE_EVENTS = `
  WITH due AS (
    SELECT e.id, e.subscription_id, e.target_id, e.next_attempt_at
      FROM events e
     WHERE e.state = 'pending' AND e.next_attempt_at <= now()
     ORDER BY e.next_attempt_at
     LIMIT $1 * 4
       FOR UPDATE SKIP LOCKED
  ), picked AS (
    SELECT id, subscription_id
      FROM (SELECT d.*, row_number() OVER (PARTITION BY d.target_id
                                           ORDER BY d.next_attempt_at) AS nth
              FROM due d) ranked
     WHERE nth <= $2
     ORDER BY next_attempt_at
     LIMIT $1
  )
  UPDATE events e
     SET attempts = e.attempts + 1,
         next_attempt_at = now() + make_interval(secs => $3::double precision / 1000)
    FROM picked p
   WHERE e.id = p.id AND e.subscription_id = p.subscription_id
  RETURNING e.id, e.subscription_id, e.tenant_id, e.target_id, e.type, e.data, e.occurred_at,
            e.attempts`;

/**
 * The end of one delivery attempt, only under its fence (the attempt number it claimed): a
 * report from an attempt whose lease ran out and was claimed again writes nothing. Delivered;
 * or failed and due again in $5 ms; or ($5 null) given up. $1 event, $2 subscription,
 * $3 attempt, $4 state, $5 retry delay ms, $6 error.
 */
export const END_EVENT_ATTEMPT = `
  UPDATE events
     SET state = $4,
         next_attempt_at = CASE WHEN $5::int IS NULL THEN next_attempt_at
                                ELSE now() + make_interval(secs => $5::double precision / 1000)
                           END,
         last_error = $6,
         finished_at = CASE WHEN $4 = 'pending' THEN NULL ELSE now() END
   WHERE id = $1 AND subscription_id = $2 AND attempts = $3 AND state = 'pending'`;

/**
 * Keeps the outbox bounded: delivered and given-up rows older than $1 seconds go, at most $2
 * per call.
 */
export const PRUNE_FINISHED_EVENTS = `
  DELETE FROM events e
   USING (SELECT id, subscription_id FROM events
           WHERE state <> 'pending'
             AND finished_at < now() - make_interval(secs => $1::double precision)
           ORDER BY finished_at
           LIMIT $2) old
   WHERE e.id = old.id AND e.subscription_id = old.subscription_id`;
