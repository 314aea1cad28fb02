/**
 * Appends revisions from a JSON array of rows. The unique (schedule_id, revision) key makes a
 * revision's row exist once: the edit that wrote the revision holds the schedule's lock, so a
 * conflict here is a bug and fails the transaction rather than being ignored.
 */
export const INSERT_REVISIONS = `
  INSERT INTO schedule_revisions (tenant_id, schedule_id, revision, change, changed_by_key_id,
                                  changes, definition, note)
  SELECT r.tenant_id, r.schedule_id, r.revision, r.change, r.changed_by_key_id, r.changes,
         r.definition, r.note
    FROM jsonb_to_recordset($1::jsonb) AS r(
      tenant_id uuid, schedule_id uuid, revision int, change text, changed_by_key_id text,
      changes jsonb, definition jsonb, note text)`;

/**
 * Revision 1 of a schedule, written by its first edit from the row (creationRevisionOf) under the
 * edit's lock. A schedule created before creates left revision 1 on the row already has it in
 * the history: the unique (schedule_id, revision) key keeps that one.
 */
export const INSERT_CREATION_REVISION = `
  INSERT INTO schedule_revisions (id, tenant_id, schedule_id, revision, change, changed_by_key_id,
                                  changed_at, definition)
  VALUES ($1, $2, $3, 1, 'created', $4, $5, $6::jsonb)
  ON CONFLICT (schedule_id, revision) DO NOTHING`;

const REVISION_COLUMNS = `
  id, schedule_id, revision, change, changed_by_key_id, changed_at, changes, definition, note`;

/** A schedule's revisions, newest first, keyset-paginated by revision after the row $4. */
export const LIST_REVISIONS = `
  SELECT ${REVISION_COLUMNS}
    FROM schedule_revisions
   WHERE tenant_id = $1 AND schedule_id = $2
     AND ($4::uuid IS NULL OR revision < (SELECT c.revision FROM schedule_revisions c
                                           WHERE c.id = $4 AND c.schedule_id = $2))
   ORDER BY revision DESC
   LIMIT $3`;

export const SELECT_REVISION = `
  SELECT ${REVISION_COLUMNS}
    FROM schedule_revisions
   WHERE tenant_id = $1 AND schedule_id = $2 AND revision = $3`;
