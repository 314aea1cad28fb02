import { randomUUID } from 'node:crypto';
import { Client } from 'pg';

/**
 * Tenant `tenantId`'s target (an address nothing listens on) and `count` one-time schedules on it
 * due at `runAt`, named `<prefix>-1`…, inserted by SQL: what the plan and admission tests put
 * runs on without going through the API. Returns the target's id.
 */
export async function oneTimeSchedulesBySql(
  client: Client,
  tenantId: string,
  count: number,
  runAt: Date,
  prefix: string,
): Promise<string> {
  const target = await client.query<{ id: string }>(
    `INSERT INTO targets (tenant_id, name, url) VALUES ($1, 'sink', 'http://127.0.0.1:9/')
     RETURNING id`,
    [tenantId],
  );
  await client.query(
    `INSERT INTO schedules (tenant_id, name, target_id, status, kind, run_at, missed_run_policy,
                            max_catch_up, overlap_policy, retry_max_attempts,
                            retry_initial_delay_ms, retry_max_delay_ms, retry_deadline_seconds)
     SELECT $1, $5 || '-' || i, $2, 'active', 'once', $3, 'run_once', 1, 'allow', 3, 1000, 1000,
            3600
       FROM generate_series(1, $4::int) AS i`,
    [tenantId, target.rows[0].id, runAt, count, prefix],
  );
  return target.rows[0].id;
}

/**
 * A client of `url` whose statements get generic plans from their first execution on: prepared
 * while the history is empty, a plan test's statements keep the plan such a moment would make.
 */
export async function genericPlanClient(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  await client.query(`SET plan_cache_mode = force_generic_plan`);
  return client;
}

/** A tenant inserted by SQL with the given quotas; returns its id. */
export async function tenantBySql(
  client: Client,
  name: string,
  quotas: { maxActiveSchedules: number; dispatchRatePerSecond: number; maxConcurrentRuns: number },
): Promise<string> {
  const { rows } = await client.query<{ id: string }>(
    `INSERT INTO tenants (id, name, max_active_schedules, dispatch_rate_per_second,
                          max_concurrent_runs)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [
      randomUUID(),
      name,
      quotas.maxActiveSchedules,
      quotas.dispatchRatePerSecond,
      quotas.maxConcurrentRuns,
    ],
  );
  return rows[0].id;
}
