/** A new operation with its fixed selection ($4: run ids in order), in one statement. */
export const INSERT_OPERATION = `
  WITH op AS (
    INSERT INTO bulk_operations (tenant_id, kind, total, requested_by_key_id, lease_until, status,
                                 finished_at)
    VALUES ($1, $2, cardinality($4::uuid[]), $3, now() + interval '30 seconds',
            CASE WHEN cardinality($4::uuid[]) = 0 THEN 'completed' ELSE 'running' END,
            CASE WHEN cardinality($4::uuid[]) = 0 THEN now() END)
    RETURNING *
  ), items AS (
    INSERT INTO bulk_operation_items (operation_id, run_id, position)
    SELECT op.id, x.run_id, x.position::int
      FROM op, unnest($4::uuid[]) WITH ORDINALITY AS x(run_id, position)
  )
  SELECT * FROM op`;

/**
 * Takes the lease of an operation still running whose lease is free or expired, so one replica
 * at a time processes it ($2: a given operation, or null for any stalled one of any tenant).
 */
export const LEASE_OPERATION = `
  UPDATE bulk_operations SET lease_until = now() + make_interval(secs => $1::double precision)
   WHERE id = (SELECT id FROM bulk_operations
                WHERE status = 'running' AND ($2::uuid IS NULL OR id = $2::uuid)
                  AND (lease_until IS NULL OR lease_until < now() OR $3::boolean)
                ORDER BY created_at
                LIMIT 1
                FOR UPDATE SKIP LOCKED)
  RETURNING *`;

/**
 * The next unprocessed items, locked: an item is processed once, in the transaction that does
 * its effect (the replay's insert, the cancel's update) and records its outcome.
 */
export const LOCK_PENDING_ITEMS = `
  SELECT run_id FROM bulk_operation_items
   WHERE operation_id = $1 AND outcome IS NULL
   ORDER BY position
   LIMIT $2
     FOR UPDATE SKIP LOCKED`;

export const RECORD_ITEMS = `
  UPDATE bulk_operation_items i SET outcome = x.outcome, result_run_id = x.result_run_id
    FROM jsonb_to_recordset($2::jsonb) AS x(run_id uuid, outcome text, result_run_id uuid)
   WHERE i.operation_id = $1 AND i.run_id = x.run_id AND i.outcome IS NULL`;

/** Progress, moved in the items' transaction; completed once nothing is left. */
export const ADVANCE_OPERATION = `
  UPDATE bulk_operations o
     SET processed = o.processed + $2, succeeded = o.succeeded + $3, skipped = o.skipped + $4,
         status = CASE WHEN o.processed + $2 >= o.total THEN 'completed' ELSE 'running' END,
         finished_at = CASE WHEN o.processed + $2 >= o.total THEN now() END,
         lease_until = now() + make_interval(secs => $5::double precision)
   WHERE o.id = $1
  RETURNING status`;

export const SELECT_OPERATION = `SELECT * FROM bulk_operations WHERE tenant_id = $1 AND id = $2`;

export const LIST_ITEMS = `
  SELECT i.run_id, i.outcome, i.result_run_id
    FROM bulk_operation_items i
    JOIN bulk_operations o ON o.id = i.operation_id
   WHERE o.tenant_id = $1 AND i.operation_id = $2
     AND ($4::uuid IS NULL OR i.position > (SELECT c.position FROM bulk_operation_items c
                                             WHERE c.operation_id = $2 AND c.run_id = $4))
   ORDER BY i.position
   LIMIT $3`;

/**
 * Forgets completed bulk operations finished more than $1 days ago, at most $2 of them (their
 * items go with them, by cascade; each holds at most MAX_BULK_RUNS). Invariant: a running
 * operation is never pruned, so every selected run still gets its turn.
 */
export const PRUNE_FINISHED_OPERATIONS = `
  DELETE FROM bulk_operations
   WHERE id IN (SELECT id FROM bulk_operations
                 WHERE status = 'completed' AND finished_at < now() - make_interval(days => $1)
                 ORDER BY finished_at LIMIT $2)`;
