/**
 * Every tenant call's first statement: the tenant behind an API key, with the digest its secret
 * is checked against. Invariant: only a key that is not revoked authenticates, and it names its
 * own tenant only (the key's row, never the request, says which tenant).
 */
export const TENANT_BY_ACTIVE_KEY = `
  SELECT k.secret_sha256, t.id, t.name, t.max_active_schedules, t.dispatch_rate_per_second,
         t.max_concurrent_runs, t.weight, t.history_retention_days, t.created_at, t.updated_at
    FROM api_keys k
    JOIN tenants t ON t.id = k.tenant_id
   WHERE k.key_id = $1 AND k.revoked_at IS NULL`;
