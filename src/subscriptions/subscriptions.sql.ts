/**
 * Subscriptions: a tenant's bounded set of (target, event types).
 */

/**
 * Serialises a tenant's subscription creates, so the count checked by INSERT_SUBSCRIPTION is
 * exact: the bound per tenant holds under concurrent creates. $1 tenant.
 */
export const LOCK_TENANT_SUBSCRIPTIONS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.subscriptions:' || $1::text, 0))`;

/**
 * Inserts a subscription only for a live (not deleted) target of the same tenant, and only while
 * the tenant has fewer than $4 subscriptions. No row: `target_ok` and `count` say which failed.
 * $1 tenant, $2 target, $3 event types, $4 the bound.
 */
export const INSERT_SUBSCRIPTION = `
  WITH target AS (
    SELECT id FROM targets WHERE id = $2 AND tenant_id = $1 AND deleted_at IS NULL
  ), existing AS (
    SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = $1
  ), inserted AS (
    INSERT INTO subscriptions (tenant_id, target_id, event_types)
    SELECT $1, t.id, $3::text[] FROM target t, existing e WHERE e.n < $4
    RETURNING id, tenant_id, target_id, event_types, created_at
  )
  SELECT i.*, EXISTS (SELECT 1 FROM target) AS target_ok, (SELECT n FROM existing) AS count
    FROM (SELECT 1) one LEFT JOIN inserted i ON true`;

/** Deletes one subscription; its pending deliveries go with it (ON DELETE CASCADE). */
export const DELETE_SUBSCRIPTION = `
  DELETE FROM subscriptions WHERE id = $1 AND tenant_id = $2`;
