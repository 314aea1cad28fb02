import { rowById } from '../database';

/**
 * The targets module's hand-written SQL. Every statement filters by tenant_id (a tenant never
 * sees another's targets) and, except where noted, by deleted_at IS NULL (a deleted target is
 * gone for every caller but the audit trail).
 */

/** What reads return. The secret itself is never selected here, only whether there is one. */
export const TARGET_COLUMNS = `
  id, tenant_id, name, kind, url, method, headers, timeout_ms, deduplicates,
  signing_secret IS NOT NULL AS has_signing_secret, previous_signing_secret_expires_at,
  auth_view, max_concurrency, rate_per_second, status, disabled_reason, backoff_until,
  created_at, updated_at`;

export const SELECT_TARGET = `
  SELECT ${TARGET_COLUMNS}
    FROM targets
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL`;

/**
 * The live targets named by ($1 tenant, $2 target id) pairs, with their secrets: the only
 * statement that reads them, for the worker to sign requests. Each pair is matched on both
 * columns, so a target is found only for its own tenant, and one statement serves a batch of
 * runs of many tenants (each tenant's runs of a batch cost no statement of their own). Each pair
 * is one primary-key probe (rowById, whatever the statistics): a semi-join of
 * the pairs against the table was planned as a hash over a scan of every tenant's targets, on
 * every batch (1,000 targets read to find 6). The caller passes each pair once. A rotated-out
 * secret past its overlap is not used, even before the relay drops it
 * (DROP_EXPIRED_PREVIOUS_SECRETS).
 */
export const SELECT_TARGETS_FOR_DISPATCH = `
  SELECT t.*
    FROM unnest($1::uuid[], $2::uuid[]) AS wanted(tenant_id, id)
   ${rowById(
     'targets',
     't',
     'wanted.id',
     `${TARGET_COLUMNS}, signing_secret, auth,
      CASE WHEN previous_signing_secret_expires_at > now() THEN previous_signing_secret END
        AS previous_signing_secret`,
     { also: 'x.tenant_id = wanted.tenant_id AND x.deleted_at IS NULL' },
   )}`;

// Keyset pagination over targets_tenant_listing_idx by (created_at, id).
const LIST_SELECT = `
  SELECT ${TARGET_COLUMNS}
    FROM targets`;

/** $1 tenant, $2 page size (+1 to learn whether another page exists). */
export const LIST_TARGETS_FIRST_PAGE = `${LIST_SELECT}
   WHERE tenant_id = $1 AND deleted_at IS NULL
   ORDER BY created_at, id
   LIMIT $2`;

/**
 * $1 tenant, $2 page size, $3 the last target already returned: the page resumes after its
 * stored (created_at, id), so microseconds never round away.
 */
export const LIST_TARGETS_AFTER = `${LIST_SELECT}
   WHERE tenant_id = $1 AND deleted_at IS NULL
     AND (created_at, id) > (SELECT c.created_at, c.id FROM targets c
                              WHERE c.tenant_id = $1 AND c.id = $3)
   ORDER BY created_at, id
   LIMIT $2`;

/**
 * Invariant: a schedule may only name a live target of its own tenant.
 *
 * Run inside the transaction that writes the schedules, this holds a KEY SHARE lock on each
 * target row of $2 until that transaction ends. DELETE takes FOR UPDATE first
 * (LOCK_TARGET_FOR_DELETE), so either the delete waits and then sees the new schedule (409), or
 * the schedule waits and then sees deleted_at set (no row: 404). KEY SHARE rather than SHARE so
 * PATCHes are not blocked; in id order, like every lock taken on several rows. Outside a
 * transaction the locks are released at once and this is a plain existence check.
 */
export const LOCK_USABLE_TARGETS = `
  SELECT id
    FROM targets
   WHERE tenant_id = $1 AND id = ANY($2::uuid[]) AND deleted_at IS NULL
   ORDER BY id
     FOR KEY SHARE`;

/**
 * First statement of a delete: serialises it against schedule writes that hold
 * LOCK_USABLE_TARGETS. No row: the target does not exist for this tenant (404).
 */
export const LOCK_TARGET_FOR_DELETE = `
  SELECT id
    FROM targets
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
     FOR UPDATE`;

/**
 * Invariant: a target that active or paused schedules use cannot be deleted (they would fire
 * at nothing). One conditional statement, so the check and the delete see the same rows; it runs
 * after LOCK_TARGET_FOR_DELETE in the same transaction and so gets a snapshot taken after any
 * schedule write that held the row lock has committed. No row returned: such schedules exist (409).
 */
export const SOFT_DELETE_UNUSED_TARGET = `
  UPDATE targets t
     SET deleted_at = now(), updated_at = now()
   WHERE t.tenant_id = $1 AND t.id = $2 AND t.deleted_at IS NULL
     AND NOT EXISTS (
           SELECT 1
             FROM schedules s
            WHERE s.tenant_id = t.tenant_id
              AND s.target_id = t.id
              AND s.status IN ('active', 'paused'))
  RETURNING t.id`;

/** Explains a 409: how many live schedules still use the target (for the problem detail). */
export const COUNT_SCHEDULES_USING_TARGET = `
  SELECT count(*)::int AS n
    FROM schedules
   WHERE tenant_id = $1 AND target_id = $2 AND status IN ('active', 'paused')`;

/**
 * Invariant: a target holds at most two secrets, and the older one only for the overlap the
 * caller chose. The current secret becomes the previous one (dropping any earlier previous
 * one) unless there is none or the overlap is 0; $3 is the new secret, $4 the overlap seconds.
 */
export const ROTATE_SIGNING_SECRET = `
  UPDATE targets
     SET previous_signing_secret = CASE WHEN $4::int > 0 THEN signing_secret END,
         previous_signing_secret_expires_at =
           CASE WHEN $4::int > 0 AND signing_secret IS NOT NULL
                THEN now() + make_interval(secs => $4::int) END,
         signing_secret = $3,
         updated_at = now()
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
  RETURNING ${TARGET_COLUMNS}`;

/** Forgets rotated-out secrets whose overlap has ended, at most $1 targets per call. */
export const DROP_EXPIRED_PREVIOUS_SECRETS = `
  UPDATE targets
     SET previous_signing_secret = NULL, previous_signing_secret_expires_at = NULL
   WHERE id IN (SELECT id FROM targets
                 WHERE previous_signing_secret_expires_at <= now()
                 LIMIT $1)`;

/**
 * Secrets at rest sealed under another key than $1 (the current key's prefix, `enc:v1:<id>:%`),
 * deleted targets included (their secrets are still at rest), at most $2, for a key rotation.
 */
export const SELECT_STALE_SEALED_SECRETS = `
  SELECT id, signing_secret, previous_signing_secret, auth
    FROM targets
   WHERE signing_secret NOT LIKE $1 OR previous_signing_secret NOT LIKE $1 OR auth NOT LIKE $1
   ORDER BY id
   LIMIT $2`;

/**
 * Writes re-sealed secrets, each only over the value it was read as (compare and set), so a
 * rotation or PATCH that ran meanwhile is never overwritten with the older secret. One row per
 * target: $1 ids, $2/$3/$4 the signing secret, previous secret and auth as read, $5/$6/$7 their
 * new sealing.
 */
export const WRITE_RESEALED_SECRETS = `
  UPDATE targets t
     SET signing_secret = u.new_s, previous_signing_secret = u.new_p, auth = u.new_a
    FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                $7::text[])
         AS u(id, old_s, old_p, old_a, new_s, new_p, new_a)
   WHERE t.id = u.id
     AND t.signing_secret IS NOT DISTINCT FROM u.old_s
     AND t.previous_signing_secret IS NOT DISTINCT FROM u.old_p
     AND t.auth IS NOT DISTINCT FROM u.old_a`;

/**
 * A 429/503 with Retry-After slows the whole target: none of its runs is admitted or claimed
 * before backoff_until (admission reads it). Only ever moved later, so a shorter Retry-After
 * answered meanwhile never cuts a longer one short. In the completion's transaction.
 * $1 tenant, $2 target, $3 milliseconds from now. Returns the target when it moved.
 */
export const BACK_OFF_TARGET = `
  UPDATE targets
     SET backoff_until = now() + make_interval(secs => $3::double precision / 1000)
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
     AND (backoff_until IS NULL
          OR backoff_until < now() + make_interval(secs => $3::double precision / 1000))
  RETURNING id`;

/**
 * A 410 Gone disables the target with the reason (in the completion's transaction): its runs
 * end FAILED target_gone from now on (admission, claim) until a PATCH re-enables it. Only an
 * active target: the first reason stays. $1 tenant, $2 target, $3 reason. Returns it if it
 * changed.
 */
export const DISABLE_TARGET = `
  UPDATE targets
     SET status = 'disabled', disabled_reason = $3, updated_at = now()
   WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL AND status = 'active'
  RETURNING id`;

/**
 * A target's status before an edit, locked until the edit commits, so that the move from active
 * to disabled is seen by exactly one edit (its target.disabled event). $1 tenant, $2 target.
 */
export const LOCK_TARGET_STATUS = `
  SELECT status FROM targets WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL FOR UPDATE`;
