import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { shardOf } from '../src/due-index';

const BATCH = 5_000;

/** One schedule row to seed: a one-time job (runAt) or a cron schedule with its next instant. */
export interface SeedRow {
  tenantId: string;
  targetId: string;
  cron: string | null;
  /** The next due instant: runAt for a one-time job. */
  dueAt: Date;
}

/**
 * Writes schedules exactly as the API's create leaves them for the poller: the schedules row
 * (revision 1, active, next_due_at) and its due_index entry in the shard the service computes
 * (shardOf, the same function) and the tenant's count of live schedules, in batches of 5,000 per
 * transaction. Idempotency keys are not
 * written (nothing reads them at dispatch). Every schedule has missedRunPolicy `all` (up to 1,000
 * instants) and overlapPolicy `allow`: the bench expects every instant to run, so a poller that
 * falls behind must catch up, not coalesce (the default `latest` would write SKIPPED rows).
 * Returns the ids in the order of `rows`.
 */
export async function seedSchedules(
  url: string,
  count: number,
  row: (i: number) => SeedRow,
  progress?: (done: number) => void,
): Promise<string[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  const all: string[] = [];
  try {
    for (let done = 0; done < count; done += BATCH) {
      const n = Math.min(BATCH, count - done);
      const cols = {
        id: [] as string[],
        shard: [] as number[],
        tenant: [] as string[],
        target: [] as string[],
        kind: [] as string[],
        cron: [] as Array<string | null>,
        runAt: [] as Array<string | null>,
        due: [] as string[],
      };
      for (let i = 0; i < n; i++) {
        const r = row(done + i);
        const id = randomUUID();
        cols.id.push(id);
        cols.shard.push(shardOf(id));
        cols.tenant.push(r.tenantId);
        cols.target.push(r.targetId);
        cols.kind.push(r.cron ? 'cron' : 'once');
        cols.cron.push(r.cron);
        cols.runAt.push(r.cron ? null : r.dueAt.toISOString());
        cols.due.push(r.dueAt.toISOString());
      }
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO schedules (id, tenant_id, name, target_id, status, kind, cron, timezone, run_at,
                                next_due_at, missed_run_policy, max_catch_up, overlap_policy,
                                retry_max_attempts, retry_initial_delay_ms, retry_max_delay_ms,
                                retry_deadline_seconds)
         SELECT x.id, x.tenant, 'seeded', x.target, 'active', x.kind, x.cron,
                CASE WHEN x.cron IS NULL THEN NULL ELSE 'UTC' END, x.run_at, x.due,
                'all', 1000, 'allow', 3, 1000, 300000, 3600
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
                       $6::timestamptz[], $7::timestamptz[])
                AS x(id, tenant, target, kind, cron, run_at, due)`,
        [cols.id, cols.tenant, cols.target, cols.kind, cols.cron, cols.runAt, cols.due],
      );
      await client.query(
        `INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
         SELECT x.shard, x.due, x.id, x.tenant, 1
           FROM unnest($1::uuid[], $2::smallint[], $3::uuid[], $4::timestamptz[])
                AS x(id, shard, tenant, due)`,
        [cols.id, cols.shard, cols.tenant, cols.due],
      );
      // The tenants' live counts, as a create keeps them (the maxActiveSchedules quota).
      await client.query(
        `INSERT INTO tenant_schedule_counts AS c (tenant_id, live)
         SELECT tenant, count(*) FROM unnest($1::uuid[]) AS x(tenant) GROUP BY tenant
         ON CONFLICT (tenant_id) DO UPDATE SET live = c.live + excluded.live`,
        [cols.tenant],
      );
      await client.query('COMMIT');
      all.push(...cols.id);
      progress?.(done + n);
    }
    // Vacuumed as well as analysed, as a long-running system's tables would be: otherwise
    // autovacuum's first pass over freshly inserted rows (a million in the scale scenario) lands
    // in the measured window.
    await client.query('VACUUM (ANALYZE) schedules');
    await client.query('VACUUM (ANALYZE) due_index');
  } finally {
    await client.end();
  }
  return all;
}

const DAY_MS = 86_400_000;

/**
 * `count` cron schedules of one tenant that stay idle through any run: each names one whole
 * second between 2 and 300 days ahead (that second of that day of the year), its next instant.
 */
export async function seedIdleSchedules(
  url: string,
  count: number,
  tenant: { tenantId: string; targetId: string },
  progress?: (done: number) => void,
): Promise<void> {
  const { tenantId, targetId } = tenant;
  const now = Date.now();
  await seedSchedules(
    url,
    count,
    () => {
      const due = new Date(
        Math.floor((now + 2 * DAY_MS + Math.random() * 298 * DAY_MS) / 1000) * 1000,
      );
      const cron =
        `${due.getUTCSeconds()} ${due.getUTCMinutes()} ${due.getUTCHours()} ` +
        `${due.getUTCDate()} ${due.getUTCMonth() + 1} *`;
      return { tenantId, targetId, cron, dueAt: due };
    },
    progress,
  );
}

/** Inserts a tenant and a target directly (for seeded background load that never fires). */
export async function seedTenant(
  url: string,
  name: string,
): Promise<{ tenantId: string; targetId: string }> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const tenant = await client.query<{ id: string }>(
      `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
       VALUES ($1, 10000000, 1000, 100) RETURNING id`,
      [name],
    );
    const target = await client.query<{ id: string }>(
      `INSERT INTO targets (tenant_id, name, url, deduplicates)
       VALUES ($1, $2, 'http://127.0.0.1:9/never', true) RETURNING id`,
      [tenant.rows[0].id, name],
    );
    return { tenantId: tenant.rows[0].id, targetId: target.rows[0].id };
  } finally {
    await client.end();
  }
}
