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
  /** The schedule's priority (its runs' admission order and queue); default `normal`. */
  priority?: 'high' | 'normal' | 'low';
  /** The schedule's payload as JSON text; default `{}`. */
  payload?: string;
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
        priority: [] as string[],
        payload: [] as string[],
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
        cols.priority.push(r.priority ?? 'normal');
        cols.payload.push(r.payload ?? '{}');
      }
      await client.query('BEGIN');
      await client.query(
        `INSERT INTO schedules (id, tenant_id, name, target_id, status, kind, cron, timezone, run_at,
                                next_due_at, missed_run_policy, max_catch_up, overlap_policy,
                                retry_max_attempts, retry_initial_delay_ms, retry_max_delay_ms,
                                retry_deadline_seconds, priority, payload)
         SELECT x.id, x.tenant, 'seeded', x.target, 'active', x.kind, x.cron,
                CASE WHEN x.cron IS NULL THEN NULL ELSE 'UTC' END, x.run_at, x.due,
                'all', 1000, 'allow', 3, 1000, 300000, 3600, x.priority, x.payload::jsonb
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::text[], $5::text[],
                       $6::timestamptz[], $7::timestamptz[], $8::text[], $9::text[])
                AS x(id, tenant, target, kind, cron, run_at, due, priority, payload)`,
        [
          cols.id,
          cols.tenant,
          cols.target,
          cols.kind,
          cols.cron,
          cols.runAt,
          cols.due,
          cols.priority,
          cols.payload,
        ],
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
    // And written back: the seed's dirty pages (a million rows write over a gigabyte of WAL)
    // would otherwise be flushed by the next checkpoint, inside whichever measured window it
    // falls in; a small seed's checkpoint takes a moment. A role without the right to
    // checkpoint (pg_checkpoint) leaves it to the server's own cadence.
    await client.query('CHECKPOINT').catch(() => undefined);
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

/** A tenant's quotas as the tenants table holds them (weight defaults to 1). */
export interface SeedQuotas {
  maxActiveSchedules: number;
  dispatchRatePerSecond: number;
  maxConcurrentRuns: number;
}

/** Inserts a tenant and a target directly (for seeded background load that never fires). */
export async function seedTenant(
  url: string,
  name: string,
): Promise<{ tenantId: string; targetId: string }> {
  const [tenant] = await seedTenants(url, [name], 'http://127.0.0.1:9/never', {
    maxActiveSchedules: 10_000_000,
    dispatchRatePerSecond: 1000,
    maxConcurrentRuns: 100,
  });
  return tenant;
}

/**
 * Inserts tenants and one deduplicating target each (named like the tenant, calling
 * `targetUrl`) in one transaction of two statements, as the API would leave them apart from API
 * keys (nothing here calls the API as these tenants): every NOT NULL column of `tenants` and
 * `targets` without a default is given. Returns them in the order of `names`.
 */
export async function seedTenants(
  url: string,
  names: readonly string[],
  targetUrl: string,
  quotas: SeedQuotas,
): Promise<Array<{ tenantId: string; targetId: string }>> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('BEGIN');
    const tenants = await client.query<{ id: string; name: string }>(
      `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
       SELECT n, $2, $3, $4 FROM unnest($1::text[]) AS n RETURNING id, name`,
      [names, quotas.maxActiveSchedules, quotas.dispatchRatePerSecond, quotas.maxConcurrentRuns],
    );
    const targets = await client.query<{ id: string; tenant_id: string }>(
      `INSERT INTO targets (tenant_id, name, url, deduplicates)
       SELECT t, $3, $2, true FROM unnest($1::uuid[]) AS t RETURNING id, tenant_id`,
      [tenants.rows.map((t) => t.id), targetUrl, 'bench-sink'],
    );
    await client.query('COMMIT');
    const tenantByName = new Map(tenants.rows.map((t) => [t.name, t.id]));
    const targetByTenant = new Map(targets.rows.map((t) => [t.tenant_id, t.id]));
    return names.map((name) => {
      const tenantId = tenantByName.get(name);
      const targetId = tenantId && targetByTenant.get(tenantId);
      if (!tenantId || !targetId) throw new Error(`seeding tenant ${name} wrote no row`);
      return { tenantId, targetId };
    });
  } finally {
    await client.end();
  }
}
