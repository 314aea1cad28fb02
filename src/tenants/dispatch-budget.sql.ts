/**
 * The tenant's dispatch rate, across all replicas. Callers hold the tenant's permit lock (the
 * claim transaction's advisory lock), so reading the balance and then spending it cannot race.
 * Tokens refill continuously at dispatch_rate_per_second, capped at one second's worth.
 */
export const OPEN_BUDGET = `
  INSERT INTO tenant_dispatch_budget (tenant_id, tokens, refilled_at)
  SELECT id, dispatch_rate_per_second, clock_timestamp() FROM tenants WHERE id = $1
  ON CONFLICT (tenant_id) DO NOTHING`;

/** Milliseconds until one token is available (0 when one is). */
export const BUDGET_WAIT_MS = `
  SELECT greatest(0, (1 - least(t.dispatch_rate_per_second,
                                 b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                            * t.dispatch_rate_per_second))
                     / t.dispatch_rate_per_second * 1000)::float8 AS wait_ms
    FROM tenant_dispatch_budget b JOIN tenants t ON t.id = b.tenant_id
   WHERE b.tenant_id = $1`;

export const SPEND_TOKEN = `
  UPDATE tenant_dispatch_budget b
     SET tokens = least(t.dispatch_rate_per_second,
                        b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                   * t.dispatch_rate_per_second) - 1,
         refilled_at = clock_timestamp()
    FROM tenants t
   WHERE b.tenant_id = $1 AND t.id = b.tenant_id`;
