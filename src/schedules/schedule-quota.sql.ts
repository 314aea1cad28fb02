import { rowById } from '../database';

/**
 * The maxActiveSchedules quota, kept as one counter row per tenant (tenant_schedule_counts.live,
 * its live schedules: active or paused). Invariant: in every committed state, live equals the
 * number of the tenant's schedules in a live status and never exceeds the quota it was admitted
 * under. Each statement runs in the transaction of the transition it counts, as late in it as
 * possible: the row lock is then held only until that transaction's commit, and writers of one
 * tenant queue on the row for about a commit each, whatever the number of schedules.
 */

/**
 * Admits $2 new live schedules for tenant $1 under quota $3, all or none: no row returned means
 * they do not fit. Conditional on the row as locked, so concurrent admissions cannot both take
 * the last slot. The first admission of a tenant inserts the row (a concurrent first one waits on
 * the key and takes the update path). A refusal leaves the row locked until the transaction ends.
 */
export const ADMIT_SCHEDULES = `
  INSERT INTO tenant_schedule_counts AS c (tenant_id, live)
  SELECT $1::uuid, $2::int WHERE $2::int <= $3::int
  ON CONFLICT (tenant_id) DO UPDATE
     SET live = c.live + excluded.live
   WHERE c.live + excluded.live <= $3::int
  RETURNING c.live`;

/**
 * Locks tenant $1's counter (creating it at 0 if absent) and reads it: for a batch that does not
 * fit as a whole, the room left is then known and stays so until the transaction ends.
 */
export const LOCK_SCHEDULE_COUNT = `
  INSERT INTO tenant_schedule_counts AS c (tenant_id, live)
  VALUES ($1::uuid, 0)
  ON CONFLICT (tenant_id) DO UPDATE SET live = c.live
  RETURNING c.live`;

/**
 * Locks the counters of several tenants in tenant id order before RELEASE_SCHEDULES changes
 * them: two transactions that release for the same tenants (pollers) then never deadlock. Each
 * counter is one primary-key probe (rowById), taken in the order of the sorted ids, whatever the
 * statistics a generic plan is made with (RELEASE_SCHEDULES, written with a join, was planned as
 * a scan of every tenant's counter). $1 tenant ids.
 */
export const LOCK_SCHEDULE_COUNTS = `
  SELECT c.tenant_id
    FROM (SELECT DISTINCT tenant_id FROM unnest($1::uuid[]) AS u(tenant_id)
           ORDER BY tenant_id) wanted
   ${rowById('tenant_schedule_counts', 'c', 'wanted.tenant_id', 'x.tenant_id', {
     key: 'tenant_id',
     lock: 'FOR NO KEY UPDATE',
   })}`;

/**
 * Gives back the slots of schedules that left the live statuses (cancelled, completed): $2[i]
 * for tenant $1[i]. The CHECK (live >= 0) turns a release that was never admitted into an error.
 * `tenant_id = ANY($1)` makes the counters primary-key probes (joined with the pairs alone, a
 * generic plan hashed a scan of every tenant's counter). $1 distinct tenant ids.
 */
export const RELEASE_SCHEDULES = `
  UPDATE tenant_schedule_counts c
     SET live = c.live - x.n
    FROM unnest($1::uuid[], $2::int[]) AS x(tenant_id, n)
   WHERE c.tenant_id = ANY($1::uuid[]) AND c.tenant_id = x.tenant_id`;

/** A tenant's live schedule count, unlocked (its usage report). $1 tenant. */
export const READ_SCHEDULE_COUNT = `
  SELECT coalesce((SELECT live FROM tenant_schedule_counts WHERE tenant_id = $1), 0)::int AS live`;
