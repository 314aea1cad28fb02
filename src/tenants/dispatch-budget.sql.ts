/**
 * The tenant's dispatch rate, across all replicas. Callers hold the tenant's permit lock (the
 * claim transaction's advisory lock), so reading the balance and then spending it cannot race.
 * Tokens refill continuously at dispatch_rate_per_second, capped at one second's worth.
 */
export const OPEN_BUDGET = `
  INSERT INTO tenant_dispatch_budget (tenant_id, tokens, refilled_at)
  SELECT id, dispatch_rate_per_second, clock_timestamp() FROM tenants WHERE id = $1
  ON CONFLICT (tenant_id) DO NOTHING`;

/** The balance as of now (refilled, capped), and the refill rate. */
export const BUDGET_BALANCE = `
  SELECT least(t.dispatch_rate_per_second,
               b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                          * t.dispatch_rate_per_second)::float8 AS tokens,
         t.dispatch_rate_per_second AS rate_per_second
    FROM tenant_dispatch_budget b JOIN tenants t ON t.id = b.tenant_id
   WHERE b.tenant_id = $1`;

/** Spends $2 tokens (after refilling up to now). */
export const SPEND_TOKENS = `
  UPDATE tenant_dispatch_budget b
     SET tokens = least(t.dispatch_rate_per_second,
                        b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                   * t.dispatch_rate_per_second) - $2,
         refilled_at = clock_timestamp()
    FROM tenants t
   WHERE b.tenant_id = $1 AND t.id = b.tenant_id`;

/**
 * For a statement that claims several runs at once (see the occurrences' CLAIM_RUNS): the tokens
 * tenant `tenant` (a SQL expression) has now, refilled and capped, as a scalar subquery; a tenant
 * without a bucket yet has a full one.
 */
export const tokensNow = (tenant: string) => `
  (SELECT coalesce(
            (SELECT least(t.dispatch_rate_per_second,
                          b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                     * t.dispatch_rate_per_second)
               FROM tenant_dispatch_budget b WHERE b.tenant_id = t.id),
            t.dispatch_rate_per_second)::float8
     FROM tenants t WHERE t.id = ${tenant})`;

/**
 * Spends `count` tokens (a SQL expression, > 0 or nothing happens) of tenant `tenant`, opening
 * its bucket full first if it has none: an INSERT, usable as a data-modifying CTE.
 */
export const spendTokens = (tenant: string, count: string) => `
  INSERT INTO tenant_dispatch_budget AS b (tenant_id, tokens, refilled_at)
  SELECT t.id, t.dispatch_rate_per_second - ${count}, clock_timestamp()
    FROM tenants t
   WHERE t.id = ${tenant} AND ${count} > 0
  ON CONFLICT (tenant_id) DO UPDATE
     SET tokens = (SELECT least(t.dispatch_rate_per_second,
                                b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                           * t.dispatch_rate_per_second)
                     FROM tenants t WHERE t.id = b.tenant_id) - ${count},
         refilled_at = clock_timestamp()`;
