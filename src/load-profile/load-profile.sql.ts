/**
 * The tenants' projected load: per-minute counters maintained by every change of a schedule, so
 * a create checks the tenant's busiest minute against a few thousand counters at most, never a
 * scan of its schedules. Every statement filters by tenant_id.
 */

/**
 * Serialises the changes of one tenant's profile: a check reads the window and writes its
 * contribution before another create of the tenant may read it, so two creates can never both
 * fit into the same last room. $1 tenant.
 */
export const LOCK_LOAD_PROFILE = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.load-profile:' || $1::text, 0))`;

/**
 * What the tenant's projection over the next 24 hours is made of: the window's first minute
 * (the one that has begun) with what the tenant's dispatchRatePerSecond allows in a minute, its
 * recurring counters (at most 1,501 rows) and its one-time runs in the window; the caller adds
 * them up per minute. Rows of `kind` start | recurring | instant. $1 tenant.
 */
export const LOAD_WINDOW = `
  SELECT 'start' AS kind, NULL::text AS period, NULL::int AS slot,
         date_trunc('minute', now()) AS minute,
         (SELECT t.dispatch_rate_per_second * 60 FROM tenants t WHERE t.id = $1)::int AS runs
  UNION ALL
  SELECT 'recurring', p.period, p.slot, NULL, p.runs
    FROM tenant_load_profile p WHERE p.tenant_id = $1 AND p.runs > 0
  UNION ALL
  SELECT 'instant', NULL, NULL, x.minute, x.runs
    FROM tenant_load_instants x
   WHERE x.tenant_id = $1 AND x.runs > 0
     AND x.minute >= date_trunc('minute', now())
     AND x.minute < date_trunc('minute', now()) + interval '1440 minutes'`;

/** The contributions stored for schedules $1 (of tenant $2), locked until the transaction ends. */
export const LOCK_SCHEDULE_LOADS = `
  SELECT schedule_id, contribution FROM schedule_load
   WHERE schedule_id = ANY($1::uuid[]) AND tenant_id = $2
     FOR UPDATE`;

/** Stores (or replaces) each schedule's contribution. $1 tenant, $2 schedule ids, $3 jsonb each. */
export const PUT_SCHEDULE_LOADS = `
  INSERT INTO schedule_load (schedule_id, tenant_id, contribution)
  SELECT s, $1, c FROM unnest($2::uuid[], $3::jsonb[]) AS x(s, c)
  ON CONFLICT (schedule_id) DO UPDATE SET contribution = EXCLUDED.contribution`;

/** Forgets schedules' contributions, returning what they were. $1 schedule ids. */
export const DELETE_SCHEDULE_LOADS = `
  DELETE FROM schedule_load WHERE schedule_id = ANY($1::uuid[])
  RETURNING tenant_id, contribution`;

/**
 * Adds to recurring counters (runs > 0 only: a row is created at its first run). $1 tenant,
 * $2 periods, $3 slots, $4 runs.
 */
export const ADD_RECURRING = `
  INSERT INTO tenant_load_profile AS p (tenant_id, period, slot, runs)
  SELECT $1, period, slot, sum(runs)
    FROM unnest($2::text[], $3::int[], $4::int[]) AS c(period, slot, runs)
   GROUP BY period, slot
  ON CONFLICT (tenant_id, period, slot) DO UPDATE SET runs = p.runs + EXCLUDED.runs`;

/** Takes back from recurring counters, never below zero. Same parameters, runs > 0. */
export const SUBTRACT_RECURRING = `
  UPDATE tenant_load_profile p SET runs = greatest(0, p.runs - c.runs)
    FROM (SELECT period, slot, sum(runs)::int AS runs
            FROM unnest($2::text[], $3::int[], $4::int[]) AS c(period, slot, runs)
           GROUP BY period, slot) c
   WHERE p.tenant_id = $1 AND p.period = c.period AND p.slot = c.slot`;

/** Adds one-time runs to their minutes. $1 tenant, $2 minutes, $3 runs. */
export const ADD_INSTANTS = `
  INSERT INTO tenant_load_instants AS p (tenant_id, minute, runs)
  SELECT $1, minute, sum(runs)
    FROM unnest($2::timestamptz[], $3::int[]) AS c(minute, runs)
   GROUP BY minute
  ON CONFLICT (tenant_id, minute) DO UPDATE SET runs = p.runs + EXCLUDED.runs`;

/** Takes one-time runs back from their minutes, never below zero. Same parameters. */
export const SUBTRACT_INSTANTS = `
  UPDATE tenant_load_instants p SET runs = greatest(0, p.runs - c.runs)
    FROM (SELECT minute, sum(runs)::int AS runs
            FROM unnest($2::timestamptz[], $3::int[]) AS c(minute, runs)
           GROUP BY minute) c
   WHERE p.tenant_id = $1 AND p.minute = c.minute`;

/** Minutes that have passed no longer count: their rows go (bounded, per tenant). $1 tenant. */
export const PRUNE_PAST_INSTANTS = `
  DELETE FROM tenant_load_instants
   WHERE ctid IN (SELECT ctid FROM tenant_load_instants
                   WHERE tenant_id = $1 AND minute < date_trunc('minute', now())
                   LIMIT 1000)`;

/** One-time runs already projected in minutes $2 (beyond the window). $1 tenant. */
export const INSTANT_RUNS = `
  SELECT minute, runs FROM tenant_load_instants WHERE tenant_id = $1 AND minute = ANY($2::timestamptz[])`;
