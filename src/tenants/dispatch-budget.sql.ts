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
 * For a statement that claims runs itself (see the occurrences' CLAIM_RUNS): the tokens tenant
 * `tenant` (a SQL expression, e.g. a column of the outer query) has now, refilled and capped, as
 * a scalar subquery; a tenant without a bucket yet has a full one.
 */
export const tokensNow = (tenant: string) => `
  (SELECT coalesce(
            (SELECT least(bt.dispatch_rate_per_second,
                          bb.tokens + extract(epoch FROM clock_timestamp() - bb.refilled_at)
                                      * bt.dispatch_rate_per_second)
               FROM tenant_dispatch_budget bb WHERE bb.tenant_id = bt.id),
            bt.dispatch_rate_per_second)::float8
     FROM tenants bt WHERE bt.id = ${tenant})`;

/**
 * Spends, per tenant, as many tokens as `claimed` (a CTE with a tenant_id column) has rows of
 * that tenant, opening a missing bucket full first: an INSERT, usable as a data-modifying CTE.
 * The inserted row is a full bucket minus the spend, so on conflict `rate - EXCLUDED.tokens` is
 * the spend, taken from the existing bucket refilled up to now.
 */
export const spendTokensOf = (claimed: string) => `
  INSERT INTO tenant_dispatch_budget AS b (tenant_id, tokens, refilled_at)
  SELECT bt.id, bt.dispatch_rate_per_second - n.spent, clock_timestamp()
    FROM (SELECT tenant_id, count(*) AS spent FROM ${claimed} GROUP BY tenant_id) n
    JOIN tenants bt ON bt.id = n.tenant_id
  ON CONFLICT (tenant_id) DO UPDATE
     SET tokens = (SELECT least(bt.dispatch_rate_per_second,
                                b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                           * bt.dispatch_rate_per_second)
                            - (bt.dispatch_rate_per_second - EXCLUDED.tokens)
                     FROM tenants bt WHERE bt.id = b.tenant_id),
         refilled_at = clock_timestamp()`;
