/**
 * A schedule has at most one due-index entry. Replacing it is a delete then an insert inside
 * the transaction that changes the schedule, so the index never points at two instants.
 */
export const REMOVE_DUE_ENTRIES = `DELETE FROM due_index WHERE schedule_id = $1`;

export const INSERT_DUE_ENTRY = `
  INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
  VALUES ($1, $2, $3, $4, $5)`;

/**
 * The poller's bounded range scan: only entries already due by the database clock, in the
 * shards this poller holds, oldest first. Cost follows the due entries, not the total: the
 * primary key (shard, due_at, schedule_id) answers `shard = ANY(..) AND due_at <= now()`.
 * SKIP LOCKED lets pollers that briefly overlap on a shard take disjoint entries.
 */
export const CLAIM_DUE_ENTRIES = `
  SELECT d.shard, d.due_at, d.due_at::text AS due_at_exact, d.schedule_id, d.revision
    FROM due_index d
   WHERE d.shard = ANY($1::smallint[]) AND d.due_at <= now()
   ORDER BY d.due_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED`;

/**
 * Deletes claimed entries by their exact keys, in one statement per batch (due_at travels as
 * text, which keeps the microseconds a JavaScript Date would drop).
 */
export const DELETE_DUE_ENTRIES = `
  DELETE FROM due_index d
   USING unnest($1::smallint[], $2::text[], $3::uuid[]) AS x(shard, due_at, schedule_id)
   WHERE d.shard = x.shard AND d.due_at = x.due_at::timestamptz AND d.schedule_id = x.schedule_id`;

/** Writes a batch of next entries (the poller advancing schedules) in one statement. */
export const INSERT_DUE_ENTRIES = `
  INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
  SELECT * FROM unnest($1::smallint[], $2::timestamptz[], $3::uuid[], $4::uuid[], $5::int[])`;

/** The earliest entry per held shard: one index probe per shard, never a scan of the rest. */
export const NEXT_DUE_IN_SHARDS = `
  SELECT min(x.due_at) AS next_due_at
    FROM unnest($1::smallint[]) AS s(shard)
    CROSS JOIN LATERAL (
      SELECT due_at FROM due_index WHERE shard = s.shard ORDER BY due_at LIMIT 1) x`;

/** Wakes pollers when an entry is written; delivered at commit. */
export const NOTIFY_DUE = `SELECT pg_notify('dueline_due', $1)`;
export const DUE_CHANNEL = 'dueline_due';
