/**
 * A schedule has at most one due-index entry. Replacing it is a delete then an insert inside
 * the transaction that changes the schedule, so the index never points at two instants.
 */
export const REMOVE_DUE_ENTRIES = `DELETE FROM due_index WHERE schedule_id = $1`;

export const INSERT_DUE_ENTRY = `
  INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
  VALUES ($1, $2, $3, $4, $5)`;
