import type { Client } from 'pg';

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
