/**
 * The tenant's dispatch rate, across all replicas: a token bucket per tenant. Tokens refill
 * continuously at dispatch_rate_per_second, capped at one second's worth. Claims read and spend
 * them inside the claim statement (see the occurrences' CLAIM_RUNS) under the tenant's permit
 * lock, so reading the balance and then spending it cannot race.
 */

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

/** How long until tenant $1 has a whole token (0: it has one now). */
export const BUDGET_WAIT_MS = `
  SELECT greatest(0, (1 - ${tokensNow('$1')}) / t.dispatch_rate_per_second * 1000)::float8
         AS wait_ms
    FROM tenants t WHERE t.id = $1`;
