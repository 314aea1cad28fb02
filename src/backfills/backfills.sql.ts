/**
 * A new backfill with the instants it is to run ($14: JSON [{position, at, local}], position 1.. in run order), in one
 * statement. The unique (tenant_id, idempotency_key) decides between two requests with one key:
 * the loser inserts nothing (and no instants) and reads the winner's.
 */
export const INSERT_BACKFILL = `
  WITH b AS (
    INSERT INTO backfills (tenant_id, schedule_id, idempotency_key, request_sha256, from_at, to_at,
                           reprocess, overlap_policy, max_concurrent, run_order, plan, total,
                           requested_by_key_id, status, finished_at)
    VALUES ($1, $2, $3, decode($4, 'hex'), $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13,
            CASE WHEN $12 = 0 THEN 'completed' ELSE 'running' END,
            CASE WHEN $12 = 0 THEN now() END)
    ON CONFLICT (tenant_id, idempotency_key) DO NOTHING
    RETURNING *
  ), instants AS (
    INSERT INTO backfill_instants (backfill_id, position, scheduled_at, scheduled_local)
    SELECT b.id, x.position, x.at, x.local
      FROM b, jsonb_to_recordset($14::jsonb) AS x(position int, at timestamptz, local text)
  )
  SELECT * FROM b`;

export const SELECT_BY_KEY = `
  SELECT * FROM backfills WHERE tenant_id = $1 AND idempotency_key = $2`;

export const SELECT_BACKFILL = `SELECT * FROM backfills WHERE tenant_id = $1 AND id = $2`;

/**
 * A running backfill, locked for one step of it. SKIP LOCKED: another replica's step on it is
 * under way, and this one moves to the next.
 */
export const LOCK_RUNNING = `
  SELECT * FROM backfills WHERE id = $1 AND status = 'running' FOR UPDATE SKIP LOCKED`;

/** Running backfills, oldest first, for the relay's round. */
export const RUNNING_BACKFILLS = `
  SELECT id FROM backfills WHERE status = 'running' ORDER BY created_at LIMIT $1`;

/** The next instants whose turn has not come, in run order (the backfill row is locked). */
export const NEXT_INSTANTS = `
  SELECT position, scheduled_at, scheduled_local FROM backfill_instants
   WHERE backfill_id = $1 AND outcome IS NULL
   ORDER BY position
   LIMIT $2`;

export const RECORD_INSTANTS = `
  UPDATE backfill_instants i SET outcome = x.outcome, run_id = x.run_id
    FROM jsonb_to_recordset($2::jsonb) AS x(position int, outcome text, run_id uuid)
   WHERE i.backfill_id = $1 AND i.position = x.position AND i.outcome IS NULL`;

/** Progress, in the step's transaction; completed once no instant is left. */
export const ADVANCE_BACKFILL = `
  UPDATE backfills b
     SET processed = b.processed + $2, created = b.created + $3, skipped = b.skipped + $2 - $3,
         status = CASE WHEN b.processed + $2 >= b.total THEN 'completed' ELSE b.status END,
         finished_at = CASE WHEN b.processed + $2 >= b.total THEN now() END
   WHERE b.id = $1`;

/** Cancel: the instants whose turn has not come are recorded cancelled, the backfill ends. */
export const CANCEL_INSTANTS = `
  UPDATE backfill_instants SET outcome = 'cancelled' WHERE backfill_id = $1 AND outcome IS NULL`;

export const CANCEL_BACKFILL = `
  UPDATE backfills SET status = 'cancelled', finished_at = now(),
                       processed = total, skipped = total - created
   WHERE id = $1 AND status = 'running'
  RETURNING id`;

/**
 * Forgets backfills that ended (completed or cancelled) more than $1 days ago, at most $2 of
 * them, their planned instants by cascade. Invariant: a running backfill is never pruned, so
 * each planned instant still gets its turn. Its Idempotency-Key is forgotten with it.
 */
export const PRUNE_FINISHED_BACKFILLS = `
  DELETE FROM backfills
   WHERE id IN (SELECT id FROM backfills
                 WHERE status IN ('completed', 'cancelled')
                   AND finished_at < now() - make_interval(days => $1)
                 ORDER BY finished_at LIMIT $2)`;
