import { anyRow, inPartitionsOf, rowById } from '../database';
import { lateStartEventsOf } from '../events';

/**
 * Admission: which runs may go to the queue, and starting them. A run is admitted once its
 * tenant has a permit (maxConcurrentRuns) and a rate token (dispatchRatePerSecond) for it; only
 * then does its queue job exist. A run the tenant cannot afford yet waits in the ledger (QUEUED,
 * reason throttled_*, no job, no work while it waits) until the admitter takes it, in the
 * tenant's admission order (priority, then instant). The claim then starts an admitted run
 * without looking at the tenant's budget again. Every statement filters by tenant_id.
 *
 * Permits held by a tenant: its RUNNING runs and its admitted QUEUED runs (their job is on its
 * way to a worker). Admission keeps that count at most maxConcurrentRuns, under the tenant's
 * permit lock. The dispatch rate is a token bucket per tenant in tenant_dispatch_budget, shared
 * by every replica: tokens refill continuously at dispatch_rate_per_second, capped at one
 * second's worth; a tenant without a bucket yet has a full one. A token is spent when a run is
 * admitted.
 *
 * The fleet: admitted `normal`/`low` runs whose job waits for a worker are its backlog. At
 * ADMISSION_FLEET_BACKLOG the fleet is saturated and further runs wait (`throttled_fleet`) for
 * the admitter to share the room that frees up among the waiting tenants by weight. `high`
 * runs are not held back by it: the workers keep a share of their slots for them.
 */

/**
 * The permits tenant `tenant` (a SQL expression) holds: running and admitted runs, an index range
 * of exactly that set (occurrences_holding_idx on its first column), never a read of its waiting
 * runs.
 */
const heldPermits = (tenant: string) => `
  (SELECT count(*) FROM occurrences r
    WHERE r.tenant_id = ${tenant}
      AND (r.state = 'RUNNING' OR (r.state = 'QUEUED' AND r.admitted_at IS NOT NULL)))`;

/**
 * A run waiting in its tenant's list: for its tenant's budget or for room in the fleet
 * (occurrences_waiting_admission_idx, per tenant in admission order).
 */
const WAITING_FOR_TENANT = (o: string) => `${o}.state = 'QUEUED' AND ${o}.admitted_at IS NULL
        AND ${o}.reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')`;

/**
 * A run waiting in its target's list: for the target's maxConcurrency or ratePerSecond, or for
 * its backoff to pass (occurrences_waiting_target_idx, per (tenant, target) in admission
 * order). A list of its own, so the tenant's admitter never reads past runs that wait for a
 * busy target: each run is moved there once, and taken from there once.
 */
const WAITING_FOR_TARGET = (o: string) => `${o}.state = 'QUEUED' AND ${o}.admitted_at IS NULL
        AND ${o}.reason IN ('throttled_target', 'target_backoff')`;

/** A run waiting for admission, in either list. */
const WAITING_FOR_BUDGET = (o: string) => `${o}.state = 'QUEUED' AND ${o}.admitted_at IS NULL
        AND ${o}.reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet',
                            'throttled_target', 'target_backoff')`;

/** Large enough to mean "no limit" beside any count of runs. */
const UNLIMITED = 2147483647;

/**
 * The permits target row `tg` holds: its running and admitted runs. With its tenant beside it
 * (all of a target's runs are its tenant's): a range of exactly them in occurrences_holding_idx,
 * the one index of permit holders, which a run's admitted and RUNNING versions enter once each.
 */
const targetHeldPermits = (tg: string) => `
  (SELECT count(*) FROM occurrences r
    WHERE r.tenant_id = ${tg}.tenant_id AND r.target_id = ${tg}.id
      AND (r.state = 'RUNNING' OR (r.state = 'QUEUED' AND r.admitted_at IS NOT NULL)))`;

/** The tokens target row `tg` has now (its ratePerSecond set). */
const targetTokensNow = (tg: string) => `
  coalesce((SELECT least(${tg}.rate_per_second,
                         tb.tokens + extract(epoch FROM clock_timestamp() - tb.refilled_at)
                                     * ${tg}.rate_per_second)
              FROM target_dispatch_budget tb WHERE tb.target_id = ${tg}.id),
           ${tg}.rate_per_second)::float8`;

/**
 * How many more runs target row `tg` may admit now: 0 while it is disabled or backing off,
 * else its free permits and whole tokens (UNLIMITED for a limit it does not set). The target's
 * runs are all its tenant's, so the tenant's permit lock (held by every caller that admits)
 * serialises them too.
 */
const targetRoom = (tg: string) => `
  (CASE WHEN ${tg}.status <> 'active' OR ${tg}.backoff_until > now() THEN 0
        ELSE least(CASE WHEN ${tg}.max_concurrency IS NULL THEN ${UNLIMITED}
                        ELSE ${tg}.max_concurrency - ${targetHeldPermits(tg)} END,
                   CASE WHEN ${tg}.rate_per_second IS NULL THEN ${UNLIMITED}
                        ELSE floor(${targetTokensNow(tg)}) END)
   END)::int`;

/**
 * What admission needs to know of target row `tg`, as columns: `room` (targetRoom), `gone`
 * (disabled), `backing_off`, and `waiting` (runs of it wait in its list already, so new ones
 * queue behind them). Computed once per target: as an expression per run, a batch of n runs of
 * one target counted the target's permit holders n times.
 */
const targetState = (tg: string) => `
  ${targetRoom(tg)} AS room, ${tg}.status <> 'active' AS gone,
  coalesce(${tg}.backoff_until > now(), false) AS backing_off,
  ${anyRow(`FROM occurrences tw
             WHERE tw.tenant_id = ${tg}.tenant_id AND tw.target_id = ${tg}.id
               AND ${WAITING_FOR_TARGET('tw')}`)} AS waiting`;

/**
 * Why a run may not be admitted now, from its target's state row `ts` (targetState; null: no
 * target row, a deleted target) and its rank `nth` among the runs of that target being admitted
 * together: null if it may; `target_gone` (disabled: it ends FAILED), `target_backoff`, or
 * `throttled_target` (no room, or runs of the target wait already and it queues behind them).
 * No target row: null, the delivery reports target_missing.
 */
const targetBlock = (ts: string, nth: string) => `
  (CASE WHEN ${ts}.target_id IS NULL THEN NULL
        WHEN ${ts}.gone THEN 'target_gone'
        WHEN ${ts}.backing_off THEN 'target_backoff'
        WHEN ${nth} > ${ts}.room OR ${ts}.waiting THEN 'throttled_target'
   END)`;

/**
 * Spends one token per row of `spenders` (a CTE with a target_id column) from the buckets of
 * the targets that have a ratePerSecond, like spendTokens does for tenants (each target read by
 * a primary-key probe likewise).
 */
const spendTargetTokens = (spenders: string) => `
    INSERT INTO target_dispatch_budget AS b (target_id, tokens, refilled_at)
    SELECT bt.id, bt.rate_per_second - n.spent, clock_timestamp()
      FROM (SELECT target_id, count(*) AS spent FROM ${spenders}
             WHERE target_id IS NOT NULL GROUP BY target_id) n
     ${rowById('targets', 'bt', 'n.target_id', 'x.id, x.rate_per_second', {
       also: 'x.rate_per_second IS NOT NULL',
     })}
    ON CONFLICT (target_id) DO UPDATE
       SET tokens = (SELECT least(bt.rate_per_second,
                                  b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                             * bt.rate_per_second)
                              - (bt.rate_per_second - EXCLUDED.tokens)
                       FROM targets bt WHERE bt.id = b.target_id),
           refilled_at = clock_timestamp()`;

/**
 * Spends, per tenant, as many tokens as `spenders` (a CTE with a tenant_id column) has rows of
 * that tenant, opening a missing bucket full first. The inserted row is a full bucket minus the
 * spend, so on conflict `rate - EXCLUDED.tokens` is the spend, taken from the existing bucket
 * refilled up to now. Each tenant is read by a primary-key probe (rowById): a join let a generic
 * plan hash a scan of every tenant on each call (1,000 tenants read to spend for six).
 */
const spendTokens = (spenders: string) => `
    INSERT INTO tenant_dispatch_budget AS b (tenant_id, tokens, refilled_at)
    SELECT bt.id, bt.dispatch_rate_per_second - n.spent, clock_timestamp()
      FROM (SELECT tenant_id, count(*) AS spent FROM ${spenders} GROUP BY tenant_id) n
     ${rowById('tenants', 'bt', 'n.tenant_id', 'x.id, x.dispatch_rate_per_second')}
    ON CONFLICT (tenant_id) DO UPDATE
       SET tokens = (SELECT least(bt.dispatch_rate_per_second,
                                  b.tokens + extract(epoch FROM clock_timestamp() - b.refilled_at)
                                             * bt.dispatch_rate_per_second)
                              - (bt.dispatch_rate_per_second - EXCLUDED.tokens)
                       FROM tenants bt WHERE bt.id = b.tenant_id),
           refilled_at = clock_timestamp()`;

/**
 * Serialises, per tenant, everything that takes a run permit or a rate token: admission of new
 * runs (the poller, a manual trigger), the admitter, and the claim of a run that was not
 * admitted (a retry, an external worker's claim). A permit count is only a limit if no other
 * admission of the tenant can commit between that count and its own commit. Completions and
 * lease expiries only give permits back, which cannot break the limit, so they do not take it;
 * nor does the claim of an admitted run, which holds its permit already. Advisory rather than a
 * row lock on tenants, so quota edits and schedule creation never wait on dispatch. Lock order:
 * tenant, then schedule, then run.
 *
 * For several tenants, in tenant-id order (the subquery's order is the order the outer scan
 * calls the function in), so transactions that share tenants queue rather than deadlock.
 * $1 tenant ids.
 */
export const LOCK_TENANTS_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || id::text, 0))
    FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS t(id) ORDER BY id) ordered`;

/**
 * A single claim's locks, in one round trip and in lock order: the tenant's permits, then the
 * run's schedule. The schedule lock serialises a claim that makes a run wait behind a running
 * one (`buffer_one`) with the completion that hands the turn over (see the overlap module), so
 * a waiting run can never be marked after the hand-over has looked for it. $1 run, $2 tenant.
 */
export const LOCK_TENANT_AND_SCHEDULE_OF_RUN = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $2::uuid::text, 0)),
         pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM occurrences WHERE id = $1 AND tenant_id = $2::uuid`;

/** The same as LOCK_TENANTS_PERMITS for one tenant (a claim of a run that does not exist). */
export const LOCK_TENANT_PERMITS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.run-permits:' || $1::text, 0))`;

/**
 * A batched claim's schedule locks: for the runs whose schedule does not allow concurrent runs
 * ($2), one lock per schedule in schedule-id order, the lock a single claim and a completion
 * take. Two batches then never both start a run of one such schedule. Each run, and then its
 * schedule, is a primary-key probe whatever the statistics of a cached plan (see CLAIM_RUNS: a
 * plan made on empty tables hash-joined a seq scan of each: 20 ms and 988 buffers per batch of
 * 200 in the 10,000-run burst, to lock nothing). The runs' instants confine each probe to their
 * partition, as CLAIM_RUNS's do (without them a probe searched every partition: 11 buffers a run
 * instead of 3). $1 run ids, $3..$4 their scheduled_at range.
 */
export const LOCK_SCHEDULES_OF_CLAIMS = `
  SELECT pg_advisory_xact_lock(hashtextextended('dueline.schedule-runs:' || schedule_id::text, 0))
    FROM (SELECT DISTINCT o.schedule_id
            FROM unnest($1::uuid[]) AS b(run_id)
           ${rowById('occurrences', 'o', 'b.run_id', 'x.schedule_id', {
             also: inPartitionsOf('x', '$3', '$4'),
           })}
           ${rowById('schedules', 's', 'o.schedule_id', 'x.overlap_policy')}
           WHERE NOT (s.overlap_policy = ANY($2::text[]))
           ORDER BY o.schedule_id) runs_schedules`;

/** The tokens tenant `tenant` (a SQL expression of this module's statements) has now. */
const tokensNow = (tenant: string) => `
  (SELECT coalesce(
            (SELECT least(bt.dispatch_rate_per_second,
                          bb.tokens + extract(epoch FROM clock_timestamp() - bb.refilled_at)
                                      * bt.dispatch_rate_per_second)
               FROM tenant_dispatch_budget bb WHERE bb.tenant_id = bt.id),
            bt.dispatch_rate_per_second)::float8
     FROM tenants bt WHERE bt.id = ${tenant})`;

/**
 * The budgets of tenants about to admit runs (after LOCK_TENANTS_PERMITS for them): free permits,
 * whole tokens, whether runs already wait (then new ones queue behind them), and for the fleet's
 * fair share the weight and the permits held. Each tenant is one primary-key probe (rowById):
 * `id = ANY($1)` let a generic plan scan every tenant on each call. $1 tenant ids (repeats
 * allowed).
 */
export const TENANT_BUDGETS = `
  SELECT t.id AS tenant_id, t.weight, held.n AS holding,
         t.max_concurrent_runs - held.n AS permits,
         floor(${tokensNow('t.id')})::int AS tokens,
         ${anyRow(`FROM occurrences w WHERE w.tenant_id = t.id AND ${WAITING_FOR_TENANT('w')}`)}
           AS waiting
    FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS u(id)) wanted
   ${rowById('tenants', 't', 'wanted.id', 'x.*')}
   CROSS JOIN LATERAL (SELECT ${heldPermits('t.id')}::int AS n) held`;

/**
 * The budgets of the targets of schedules $1 about to admit new runs (after
 * LOCK_TENANTS_PERMITS for their tenants, which covers their targets): per schedule, its
 * target, how many runs the target may admit now, whether it is backing off or disabled, and
 * whether runs of it wait already (then new ones queue behind them). Targets without limits,
 * backoff or a disabled status are left out: nothing holds their runs back. Each schedule, and
 * each of their targets, is one primary-key probe (rowById): a join let a generic plan scan every
 * target for the few with limits on each call. A target's state (targetState) is computed once
 * for all the schedules of it. $1 schedule ids (repeats allowed).
 */
export const TARGET_BUDGETS = `
  WITH scheduled AS MATERIALIZED (
    SELECT s.id AS schedule_id, s.tenant_id, s.target_id
      FROM (SELECT DISTINCT id FROM unnest($1::uuid[]) AS u(id)) wanted
     ${rowById('schedules', 's', 'wanted.id', 'x.id, x.tenant_id, x.target_id')}
  ), states AS MATERIALIZED (
    SELECT tg.id AS target_id, tg.tenant_id, ${targetState('tg')}
      FROM (SELECT DISTINCT target_id FROM scheduled WHERE target_id IS NOT NULL) wanted
     ${rowById('targets', 'tg', 'wanted.target_id', 'x.*')}
     WHERE tg.max_concurrency IS NOT NULL OR tg.rate_per_second IS NOT NULL
        OR tg.backoff_until > now() OR tg.status <> 'active'
  )
  SELECT sc.schedule_id, ts.target_id, ts.room, ts.gone, ts.backing_off, ts.waiting
    FROM scheduled sc
    JOIN states ts ON ts.target_id = sc.target_id AND ts.tenant_id = sc.tenant_id`;

/**
 * The fleet's backlog: admitted `normal` and `low` runs whose job waits for a worker (all
 * tenants; occurrences_queued_idx holds only admitted runs). Bounded by ADMISSION_FLEET_BACKLOG
 * (plus what admissions deciding at the same moment add), so the count stays cheap. Read without
 * a lock: the bound is a measure of saturation, not an invariant; a tenant's own limits are.
 */
export const FLEET_BACKLOG = `
  SELECT count(*)::int AS backlog FROM occurrences o
   WHERE o.state = 'QUEUED' AND o.admitted_at IS NOT NULL AND o.priority > 0`;

/**
 * What the admission of new runs reads under their tenants' permit locks, in one round trip
 * instead of three: TENANT_BUDGETS for tenants $1, TARGET_BUDGETS for schedules $2 and, when $3,
 * FLEET_BACKLOG (null otherwise), each as the statement of its own would read it (one snapshot
 * for the three, taken after the locks, as each of theirs was). $1 tenant ids, $2 schedule ids.
 */
export const NEW_RUN_BUDGETS = `
  SELECT (SELECT coalesce(json_agg(b), '[]')
            FROM (${TENANT_BUDGETS}) b) AS tenants,
         (SELECT coalesce(json_agg(tb), '[]')
            FROM (${TARGET_BUDGETS.replaceAll('$1', '$2')}) tb) AS targets,
         CASE WHEN $3::boolean THEN (${FLEET_BACKLOG}) END AS fleet_backlog`;

/**
 * What the waiting tenants ($1) could take this round, for the admitter's fair share: weight,
 * permits held, and how many waiting `normal`/`low` runs they could afford now (at most $2),
 * read without their locks (each tenant's own transaction then decides under its lock). The
 * waiting list is read only as far as the tenant can afford, not to $2: a flood limited to 50
 * permits costs 50 index entries a round, not 500.
 */
export const WAITING_DEMANDS = `
  SELECT t.id AS tenant_id, t.weight, held.n AS holding,
         (SELECT count(*) FROM (SELECT 1 FROM occurrences w
                                 WHERE w.tenant_id = t.id
                                   AND ${WAITING_FOR_TENANT('w')}
                                   AND w.priority > 0
                                 LIMIT afford.n) n)::int AS wants
    FROM tenants t
   CROSS JOIN LATERAL (SELECT ${heldPermits('t.id')}::int AS n) held
   CROSS JOIN LATERAL (
     SELECT greatest(0, least($2, t.max_concurrent_runs - held.n,
                              floor(${tokensNow('t.id')})))::int AS n) afford
   WHERE t.id = ANY($1::uuid[])`;

/**
 * Spends the tokens of runs admitted as they were created (their rows written with admitted_at
 * already, earlier in this transaction): one of its tenant's and one of its target's per run,
 * in one round trip. Each run's target is read by a probe of its row (id and scheduled_at: one
 * partition), not by ids matched against every partition. $1 tenant ids, one per admitted run;
 * $2 the runs' ids; $3 their scheduled_at.
 */
export const SPEND_TOKENS_OF_NEW_RUNS = `
  WITH admitted_runs AS (SELECT tenant_id FROM unnest($1::uuid[]) AS a(tenant_id)),
  admitted_targets AS (
    SELECT o.target_id
      FROM unnest($2::uuid[], $3::timestamptz[]) AS r(id, scheduled_at)
     ${rowById('occurrences', 'o', 'r.id', 'x.target_id', { also: 'x.scheduled_at = r.scheduled_at' })}),
  spent AS (${spendTokens('admitted_runs')}
  ), target_spent AS (${spendTargetTokens('admitted_targets')}
  )
  SELECT 1`;

/**
 * The admitter's look at the waiting lists: the tenants with runs waiting for admission, by loose
 * scans of the two waiting lists' indexes (the tenants' and the targets': one probe per such
 * tenant in each, however long each one's lists are), at most $1, starting after tenant $2 (the
 * last one of the previous round; null: from the first), so with more waiting tenants than a
 * round takes every tenant still gets its turn; and whether any waiting run is past its start
 * deadline (one probe of the deadline index), so that a round with nothing to do is this one
 * statement, not also a transaction around a SKIP_PAST_START_DEADLINE that finds nothing.
 */
export const TENANTS_WAITING = `
  WITH RECURSIVE in_tenant_lists(tenant_id, n) AS (
    (SELECT w.tenant_id, 1 FROM occurrences w
      WHERE ${WAITING_FOR_TENANT('w')} AND ($2::uuid IS NULL OR w.tenant_id > $2::uuid)
      ORDER BY w.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT w.tenant_id FROM occurrences w
             WHERE ${WAITING_FOR_TENANT('w')} AND w.tenant_id > l.tenant_id
             ORDER BY w.tenant_id LIMIT 1), l.n + 1
      FROM in_tenant_lists l WHERE l.tenant_id IS NOT NULL AND l.n < $1
  ), in_target_lists(tenant_id, n) AS (
    (SELECT w.tenant_id, 1 FROM occurrences w
      WHERE ${WAITING_FOR_TARGET('w')} AND ($2::uuid IS NULL OR w.tenant_id > $2::uuid)
      ORDER BY w.tenant_id LIMIT 1)
    UNION ALL
    SELECT (SELECT w.tenant_id FROM occurrences w
             WHERE ${WAITING_FOR_TARGET('w')} AND w.tenant_id > l.tenant_id
             ORDER BY w.tenant_id LIMIT 1), l.n + 1
      FROM in_target_lists l WHERE l.tenant_id IS NOT NULL AND l.n < $1
  )
  SELECT array(SELECT tenant_id FROM (SELECT tenant_id FROM in_tenant_lists
                                      UNION SELECT tenant_id FROM in_target_lists) waiting
                 WHERE tenant_id IS NOT NULL
                 ORDER BY tenant_id
                 LIMIT $1) AS tenants,
         (SELECT 1 FROM occurrences w
           WHERE w.start_deadline < now() AND ${WAITING_FOR_BUDGET('w')}
           LIMIT 1) IS NOT NULL AS past_start_deadline`;

/**
 * The targets of tenant $1 with runs in their waiting list, by a loose scan of that list's
 * index (one probe per target), at most $2, after target $3 (null: from the first), with what
 * the admitter does for each: `gone` (disabled: its waiting runs end) or `room` (how many it
 * may admit now; 0: nothing to do this round).
 */
export const TARGETS_WAITING = `
  WITH RECURSIVE waiting(target_id, n) AS (
    (SELECT w.target_id, 1 FROM occurrences w
      WHERE w.tenant_id = $1 AND ${WAITING_FOR_TARGET('w')}
        AND ($3::uuid IS NULL OR w.target_id > $3::uuid)
      ORDER BY w.target_id LIMIT 1)
    UNION ALL
    SELECT (SELECT w.target_id FROM occurrences w
             WHERE w.tenant_id = $1 AND ${WAITING_FOR_TARGET('w')}
               AND w.target_id > waiting.target_id
             ORDER BY w.target_id LIMIT 1), waiting.n + 1
      FROM waiting WHERE waiting.target_id IS NOT NULL AND waiting.n < $2
  )
  SELECT w.target_id, tg.status <> 'active' AS gone, ${targetRoom('tg')} AS room
    FROM waiting w JOIN targets tg ON tg.id = w.target_id AND tg.tenant_id = $1
   WHERE w.target_id IS NOT NULL
   ORDER BY w.target_id`;

/**
 * The waiting runs of a disabled target ($2, of tenant $1) end FAILED target_gone with the
 * target's disabledReason, at most $3 per call (SKIP LOCKED: a run a cancel holds is left for
 * later). Returns the runs ended.
 */
export const END_RUNS_OF_GONE_TARGET = `
  UPDATE occurrences o
     SET state = 'FAILED', reason = 'target_gone', reason_detail = tg.disabled_reason,
         finished_at = now(), updated_at = now()
    FROM targets tg
   WHERE tg.id = $2 AND tg.tenant_id = $1 AND tg.status <> 'active'
     AND o.id IN (SELECT w.id FROM occurrences w
                   WHERE w.tenant_id = $1 AND w.target_id = $2 AND ${WAITING_FOR_TARGET('w')}
                   LIMIT $3
                     FOR UPDATE SKIP LOCKED)
  RETURNING o.id`;

/**
 * The admitter, per target (after LOCK_TENANTS_PERMITS for its tenant $1): the first runs of
 * target $2's waiting list in admission order, as many as both the target and the tenant can
 * afford now (permits, tokens, backoff) and at most $3, are admitted and spend both their
 * tokens; the caller publishes their jobs. Reads only what it admits. The UPDATE joins the picked
 * runs by their whole primary key (id, scheduled_at), so each probe is pruned at run time to the
 * run's partition (the waiting list itself is read through partial indexes on waiting runs, in
 * every partition: a run may wait whatever its instant).
 */
export const ADMIT_TARGET_WAITING = `
  WITH budget AS (
    SELECT greatest(0, least(t.max_concurrent_runs - ${heldPermits('t.id')},
                             floor(${tokensNow('t.id')}), $3, ${targetRoom('tg')}))::int AS n
      FROM tenants t JOIN targets tg ON tg.id = $2 AND tg.tenant_id = t.id
     WHERE t.id = $1
  ), picked AS (
    SELECT o.id, o.scheduled_at
      FROM occurrences o
     WHERE o.tenant_id = $1 AND o.target_id = $2 AND ${WAITING_FOR_TARGET('o')}
       AND (o.start_deadline IS NULL OR o.start_deadline >= now())
     ORDER BY o.priority, o.scheduled_at, o.id
     LIMIT (SELECT n FROM budget)
       FOR UPDATE SKIP LOCKED
  ), admitted AS (
    UPDATE occurrences o
       SET admitted_at = now(), reason = NULL, updated_at = now()
      FROM picked p
     WHERE o.id = p.id AND o.scheduled_at = p.scheduled_at
    RETURNING o.id, o.tenant_id, o.priority, o.target_id, o.scheduled_at
  ), spent AS (${spendTokens('admitted')}
  ), target_spent AS (${spendTargetTokens('admitted')}
  )
  SELECT id, tenant_id, priority, scheduled_at, target_id FROM admitted`;

/**
 * Waiting runs past their start deadline, of any tenant, are SKIPPED (deadline_exceeded): they
 * could never start now (neither the admitter nor a claim takes them). Found through the
 * deadline index (occurrences_waiting_deadline_idx), so the cost is the late runs', never a scan
 * of the waiting lists; at most $1 per call, SKIP LOCKED (a run a cancel holds is left for
 * later). Returns the runs skipped.
 */
export const SKIP_PAST_START_DEADLINE = `
  UPDATE occurrences o
     SET state = 'SKIPPED', reason = 'deadline_exceeded', reason_detail = NULL,
         finished_at = now(), updated_at = now()
   WHERE o.id IN (SELECT w.id FROM occurrences w
                   WHERE w.start_deadline < now() AND ${WAITING_FOR_BUDGET('w')}
                   LIMIT $1
                     FOR UPDATE SKIP LOCKED)
  RETURNING o.id`;

/**
 * The admitter, per tenant (after LOCK_TENANTS_PERMITS for it): the first runs of the tenant's
 * waiting list in admission order, as many as the tenant has free permits and tokens (and at most
 * $2), but of `normal` and `low` runs at most $3 (its share of the fleet's room; `high` runs come
 * first in that order and need none). Each is then held to its target's budget (targetBlock,
 * ranked among the picked runs of its target; each target's state read once): those it allows are
 * admitted and spend their tokens (the tenant's and the target's), and the caller publishes their
 * jobs; the others move to their target's waiting list (`throttled_target`, `target_backoff`), or
 * end FAILED `target_gone` for a disabled target. A run past its start deadline is never admitted
 * (see SKIP_PAST_START_DEADLINE). SKIP LOCKED: a run a cancel holds is left for the next round. A
 * tenant whose rate tokens are all that holds it back admits in chunks of $4 ms of its rate
 * (ADMISSION_RATE_CHUNK_MS): while it has fewer whole tokens than such a chunk (and than its free
 * permits, its share and its waiting runs) it admits none and its tokens accumulate: a round that
 * comes early does not admit the few tokens refilled since the last. The chunk trades cost for
 * smoothness: 200 ms (40 runs of a 200/s tenant a round) costs about a fifth less Postgres CPU a
 * run than 50 ms (10), but each chunk reaches the workers as one burst that other tenants' runs
 * queue behind (bench/RESULTS.md). A run waits for its tenant's tokens at most that much longer;
 * permits, the fleet's share and `high` runs are never held back, so a tenant bound by its
 * concurrency is admitted as soon as a permit frees. $1 tenant, $2 at most this many, $3 at most
 * this many not `high`, $4 the chunk in ms (0: none). Returns the runs with what became of each
 * (`outcome`: admitted, waits, ended). Each round reads only the runs it decides (the index range
 * in admission order), however long the tenant's waiting list is, and a run leaves the tenant's
 * list when it is read. The UPDATEs join the runs by their whole primary key (id, scheduled_at):
 * each probe is pruned at run time to the run's partition.
 */
export const ADMIT_WAITING = `
  WITH limits AS (
    SELECT t.max_concurrent_runs - ${heldPermits('t.id')} AS permits,
           floor(${tokensNow('t.id')}) AS tokens,
           (SELECT count(*) FROM occurrences h
             WHERE h.tenant_id = $1 AND ${WAITING_FOR_TENANT('h')} AND h.priority = 0) AS high,
           ceil(t.dispatch_rate_per_second * $4::double precision / 1000)::int AS chunk
      FROM tenants t WHERE t.id = $1
  ), budget AS (
    -- CASE decides in order: the waiting list is counted (up to a chunk) only when the tokens
    -- fall short of everything else, so a round its tokens afford reads nothing more.
    SELECT CASE WHEN l.high > 0 OR l.tokens >= least(l.permits, $2, $3, l.chunk)
                THEN greatest(0, least(l.permits, l.tokens, $2, $3 + l.high))
                WHEN l.tokens < (SELECT count(*) FROM (
                                   SELECT 1 FROM occurrences w
                                    WHERE w.tenant_id = $1 AND ${WAITING_FOR_TENANT('w')}
                                    LIMIT l.chunk) listed)
                THEN 0
                ELSE greatest(0, least(l.permits, l.tokens, $2, $3 + l.high))
           END::int AS n
      FROM limits l
  ), picked AS (
    SELECT o.id, o.target_id, o.priority, o.scheduled_at
      FROM occurrences o
     WHERE o.tenant_id = $1 AND ${WAITING_FOR_TENANT('o')}
       AND (o.start_deadline IS NULL OR o.start_deadline >= now())
     ORDER BY o.priority, o.scheduled_at, o.id
     LIMIT (SELECT n FROM budget)
       FOR UPDATE SKIP LOCKED
  ), ranked AS (
    SELECT p.id, p.scheduled_at, p.target_id,
           row_number() OVER (PARTITION BY p.target_id
                              ORDER BY p.priority, p.scheduled_at, p.id) AS nth
      FROM picked p
  ), states AS MATERIALIZED (
    SELECT tg.id AS target_id, tg.disabled_reason, ${targetState('tg')}
      FROM (SELECT DISTINCT target_id FROM picked WHERE target_id IS NOT NULL) wanted
     ${rowById('targets', 'tg', 'wanted.target_id', 'x.*')}
     WHERE tg.tenant_id = $1
  ), verdict AS (
    SELECT r.id, r.scheduled_at, r.target_id, ${targetBlock('ts', 'r.nth')} AS blocked,
           ts.disabled_reason
      FROM ranked r LEFT JOIN states ts ON ts.target_id = r.target_id
  ), admitted AS (
    UPDATE occurrences o
       SET admitted_at = now(), reason = NULL, updated_at = now()
      FROM verdict v
     WHERE o.id = v.id AND o.scheduled_at = v.scheduled_at AND v.blocked IS NULL
    RETURNING o.id, o.tenant_id, o.priority, o.target_id, o.scheduled_at
  ), deferred AS (
    UPDATE occurrences o
       SET reason = v.blocked, updated_at = now()
      FROM verdict v
     WHERE o.id = v.id AND o.scheduled_at = v.scheduled_at AND v.blocked IN ('throttled_target', 'target_backoff')
    RETURNING o.id, o.tenant_id, o.priority, o.scheduled_at
  ), ended AS (
    UPDATE occurrences o
       SET state = 'FAILED', reason = 'target_gone', reason_detail = v.disabled_reason,
           finished_at = now(), updated_at = now()
      FROM verdict v
     WHERE o.id = v.id AND o.scheduled_at = v.scheduled_at AND v.blocked = 'target_gone'
    RETURNING o.id, o.tenant_id, o.priority, o.scheduled_at
  ), spent AS (${spendTokens('admitted')}
  ), target_spent AS (${spendTargetTokens('admitted')}
  )
  SELECT id, tenant_id, priority, scheduled_at, target_id, 'admitted' AS outcome FROM admitted
  UNION ALL SELECT id, tenant_id, priority, scheduled_at, NULL, 'waits' FROM deferred
  UNION ALL SELECT id, tenant_id, priority, scheduled_at, NULL, 'ended' FROM ended`;

/**
 * One tenant's admission, for its usage report: runs holding permits, and those waiting by
 * reason with the oldest one's age (the tenant's range of the waiting list's index). $1 tenant.
 */
export const TENANT_ADMISSION = `
  SELECT NULL::text AS reason, ${heldPermits('$1::uuid')}::int AS runs, 0::float8 AS oldest_seconds
  UNION ALL
  SELECT w.reason, count(*)::int,
         coalesce(extract(epoch FROM now() - min(w.scheduled_at)), 0)::float8
    FROM occurrences w
   WHERE w.tenant_id = $1 AND ${WAITING_FOR_BUDGET('w')}
   GROUP BY w.reason`;

/** How many runs wait for admission, by reason, and the oldest one's age. */
export const WAITING_SUMMARY = `
  SELECT w.reason, count(*)::int AS runs,
         coalesce(extract(epoch FROM now() - min(w.scheduled_at)), 0)::float8 AS oldest_seconds
    FROM occurrences w
   WHERE ${WAITING_FOR_BUDGET('w')}
   GROUP BY w.reason`;

/**
 * Run `o` (of schedule `s`) may start an attempt now by the database clock: due (never early:
 * not before its planned fire instant, which is never before its nominal one),
 * waiting (QUEUED, or RETRY_WAIT whose retry time has come), not cancelled (run or schedule),
 * within its attempts and retry deadline, and (for its first attempt) within its start deadline.
 */
const RUN_CLAIMABLE = `(o.state = 'QUEUED' OR (o.state = 'RETRY_WAIT' AND o.next_attempt_at <= now()))
       AND now() >= o.fires_at
       AND s.status <> 'cancelled'
       AND o.cancel_requested_at IS NULL
       AND o.attempt_count < o.max_attempts
       AND now() < o.retry_deadline
       AND (o.start_deadline IS NULL OR o.attempt_count > 0 OR now() <= o.start_deadline)`;

/**
 * The batch's runs that may start now (see CLAIM_RUNS), at most one per schedule whose overlap
 * policy keeps runs apart: CTEs `batch`, `claimable`, `one_per_schedule`. `admittedOnly`: only
 * runs admitted already (CLAIM_ADMITTED_RUNS); `from`, `until`: the parameters of the runs'
 * scheduled_at range.
 */
const claimableRuns = (admittedOnly: boolean, from: string, until: string) => `
  batch AS (
    SELECT b.run_id, b.tenant_id FROM unnest($1::uuid[], $2::uuid[]) AS b(run_id, tenant_id)
  ), claimable AS (
    SELECT o.id, o.row_version AS version, o.row_ctid, o.row_table, o.tenant_id, o.target_id,
           o.scheduled_at, (o.state = 'QUEUED' AND o.admitted_at IS NOT NULL) AS admitted,
           s.overlap_policy = ANY($5::text[]) AS concurrent, s.target_id AS schedule_target_id,
           s.payload,
           -- Whether this claim starts the run later than its schedule's late_after_seconds
           -- allows (the test lateStartEventsOf makes): the event's CTE reads only such runs,
           -- which no claim of a schedule without the threshold is.
           (o.attempt_count = 0 AND s.late_after_seconds IS NOT NULL
            AND now() > o.fires_at + make_interval(secs => s.late_after_seconds)) AS starts_late,
           row_number() OVER (PARTITION BY o.schedule_id ORDER BY o.scheduled_at, o.id) AS nth
      FROM batch b
     ${rowById(
       'occurrences',
       'o',
       'b.run_id',
       'x.*, x.xmin AS row_version, x.ctid AS row_ctid, x.tableoid AS row_table',
       { also: inPartitionsOf('x', from, until) },
     )}
     ${rowById('schedules', 's', 'o.schedule_id', 'x.*')}
     WHERE o.tenant_id = b.tenant_id
       AND ${RUN_CLAIMABLE}
       AND NOT EXISTS (SELECT 1 FROM targets tg
                        WHERE tg.id = o.target_id
                          AND (tg.status <> 'active' OR tg.backoff_until > now()))
       ${admittedOnly ? "AND o.state = 'QUEUED' AND o.admitted_at IS NOT NULL" : ''}
       AND (s.overlap_policy = ANY($5::text[])
            OR NOT EXISTS (SELECT 1 FROM occurrences r
                            WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'))
  ), one_per_schedule AS (
    SELECT c.* FROM claimable c WHERE c.concurrent OR c.nth = 1
  )`;

/**
 * The chosen runs (CTE `chosen`) taken: CTEs `claimed`, `attempts` (each one's attempt
 * appended) and `late_starts` (run.late for a first attempt that starts late: the events
 * module's lateStartEventsOf, which reads the run as the claim left it).
 */
const claimChosen = (from: string, until: string) => `
  claimed AS (
    UPDATE occurrences o
       SET state = 'RUNNING',
           fencing_token = o.fencing_token + 1,
           attempt_count = o.attempt_count + 1,
           lease_until = now() + make_interval(secs => $4::double precision / 1000),
           worker_id = $3,
           admitted_at = coalesce(o.admitted_at, now()),
           reason = NULL,
           reason_detail = NULL,
           next_attempt_at = NULL,
           updated_at = now()
      FROM chosen c
     WHERE o.ctid = c.row_ctid AND o.tableoid = c.row_table AND o.xmin = c.version
       AND ${inPartitionsOf('o', from, until)}
    RETURNING o.id, o.tenant_id, o.schedule_id, o.fencing_token, o.attempt_count, o.lease_until,
              o.scheduled_at, c.schedule_target_id AS target_id, c.payload, o.priority, c.admitted,
              c.starts_late,
              o.target_id AS counted_target_id,
              coalesce(o.idempotency_key, o.id) AS idempotency_key,
              o.revision, o.trigger, o.state, o.reason, o.reason_detail, o.fires_at, o.finished_at
  ), attempts AS (
    INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token, scheduled_at)
    SELECT c.id, c.attempt_count, c.tenant_id, $3, c.fencing_token, c.scheduled_at FROM claimed c
  ), late_starts AS (${lateStartEventsOf(`(
    SELECT id, tenant_id, schedule_id, counted_target_id AS target_id, revision, trigger, state,
           reason, reason_detail, attempt_count, scheduled_at, fires_at, finished_at
      FROM claimed WHERE starts_late)`)}
  )`;

/** What a claim statement answers of each run it took (a Claim), from CTE `claimed`. */
const CLAIMED_RUNS = `
  SELECT id, tenant_id, schedule_id, fencing_token, attempt_count, lease_until, scheduled_at,
         target_id, payload, priority, idempotency_key, starts_late
    FROM claimed`;

/**
 * The claim, all of it in one statement, for one run or a batch of any tenants' runs. Receipt of
 * a job is not ownership, this is: a run is taken only if RUN_CLAIMABLE holds, and for a
 * schedule whose overlap policy does not allow concurrent runs ($5) only one, none if one is
 * already RUNNING. An admitted run holds its permit and has spent its token already; a run that
 * was not admitted (a retry, an external worker's claim of a waiting run) is taken only within
 * its tenant's free permits and tokens, oldest first, and spends its token here: the caller
 * holds the tenants' permit locks (a batch that does not takes admitted runs only, with
 * CLAIM_ADMITTED_RUNS). Its fencing token goes up, so any earlier holder's writes are rejected
 * from now on, its lease starts, and its attempt is appended in the same statement (no attempt
 * exists that its claim did not commit; the attempts module ends them).
 *
 * No run of a target that is disabled or backing off is taken (admitted or not: a backoff that
 * began after its admission still holds it back, so it spends no attempt); a run that was not
 * admitted also needs room in its target's budget (targetRoom) and spends the target's token.
 *
 * A run not returned is not refused: the caller claims it alone and DIAGNOSE_CLAIM says why.
 * Must run after the locks it relies on (the schedules' for overlap, the tenants' for
 * unadmitted runs), in its own statement (its snapshot then sees every claim that committed
 * before the locks were granted).
 *
 * Each run, and its schedule, is read by a primary-key probe (rowById) and the run is updated
 * at the row address that read found (ctid, tableoid for the partition: a TID probe), so no
 * access path depends on the statistics a cached generic plan was made with (one made while the
 * history was empty joined every active run of the partition to the batch and scanned the
 * partition once per claimed run in the UPDATE: 137 ms and 10,062 buffers per batch of 200 in
 * the 10,000-run burst). The UPDATE takes a run only in the row version the CTE judged (`xmin`):
 * a concurrent change (a cancel) makes a new version at a new address, the re-check after
 * waiting for it fails, and the run is left for the one-run claim. It returns what the read took
 * of the run's schedule.
 * The runs' scheduled_at range ($6..$7, from their queue jobs) confines the statement to their
 * history partitions (inPartitionsOf); unbounded for a batch with a run whose job predates them.
 * $1 run ids, $2 their tenant ids, $3 worker id, $4 lease ms, $5 concurrent overlap policies,
 * $6..$7 the runs' scheduled_at range.
 */
export const CLAIM_RUNS = `
  WITH ${claimableRuns(false, '$6', '$7')},
  free AS (
    SELECT t.id AS tenant_id,
           t.max_concurrent_runs - ${heldPermits('t.id')} AS permits,
           floor(${tokensNow('t.id')}) AS tokens
      FROM tenants t
     WHERE t.id IN (SELECT tenant_id FROM one_per_schedule WHERE NOT admitted)
  ), target_free AS (
    SELECT tg.id AS target_id, ${targetRoom('tg')} AS room
      FROM targets tg
     WHERE tg.id IN (SELECT target_id FROM one_per_schedule WHERE NOT admitted)
  ), unadmitted AS (
    SELECT c.id, c.version, c.row_ctid, c.row_table, c.tenant_id, c.target_id, c.scheduled_at,
           c.schedule_target_id, c.payload, c.starts_late,
           row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.scheduled_at, c.id) AS nth,
           row_number() OVER (PARTITION BY c.target_id ORDER BY c.scheduled_at, c.id)
             AS nth_of_target
      FROM one_per_schedule c
     WHERE NOT c.admitted
  ), chosen AS (
    SELECT c.id, c.version, c.row_ctid, c.row_table, c.scheduled_at, c.schedule_target_id,
           c.payload, c.starts_late, c.admitted
      FROM one_per_schedule c WHERE c.admitted
    UNION ALL
    SELECT u.id, u.version, u.row_ctid, u.row_table, u.scheduled_at, u.schedule_target_id,
           u.payload, u.starts_late, false
      FROM unadmitted u JOIN free f ON f.tenant_id = u.tenant_id
      LEFT JOIN target_free tf ON tf.target_id = u.target_id
     WHERE u.nth <= least(f.permits, f.tokens)
       AND (tf.target_id IS NULL OR u.nth_of_target <= tf.room)
  ), ${claimChosen('$6', '$7')}, spent AS (${spendTokens('(SELECT tenant_id FROM claimed WHERE NOT admitted) unadmitted_claims')}
  ), target_spent AS (${spendTargetTokens(
    '(SELECT counted_target_id AS target_id FROM claimed WHERE NOT admitted) unadmitted_target_claims',
  )}
  )
  ${CLAIMED_RUNS}`;

/**
 * CLAIM_RUNS for runs admitted already (the worker's batch claim, which holds no tenant's permit
 * lock): the same runs taken, the same attempts appended, without the budgets' CTEs an admitted
 * run never needs. Postgres initialises every node of a plan at each execution, used or not, and
 * those of the budgets (permits held, tokens, targets' room, their spending) made most of a
 * one-run claim's cost. $1 run ids, $2 their tenant ids, $3 worker id, $4 lease ms, $5
 * concurrent overlap policies, $6..$7 the runs' scheduled_at range.
 */
export const CLAIM_ADMITTED_RUNS = `
  WITH ${claimableRuns(true, '$6', '$7')},
  chosen AS (
    SELECT c.id, c.version, c.row_ctid, c.row_table, c.scheduled_at, c.schedule_target_id,
           c.payload, c.starts_late, c.admitted
      FROM one_per_schedule c
  ), ${claimChosen('$6', '$7')}
  ${CLAIMED_RUNS}`;

/**
 * Why CLAIM_RUNS did not take a run: each of its conditions, read in the same transaction (so
 * under the same tenant lock), its target's among them (disabled, backing off for
 * `target_backoff_ms`, no room). `due_at` is when a not-yet-due run becomes claimable,
 * `rate_wait_ms` how long until the tenant has a whole token; budget conditions do not apply
 * to an admitted run. $3 concurrent overlap policies.
 */
export const DIAGNOSE_CLAIM = `
  SELECT o.state, o.scheduled_at, o.reason, o.reason_detail, o.schedule_id, o.priority,
         (o.state = 'QUEUED' AND o.admitted_at IS NOT NULL) AS admitted,
         (now() < o.fires_at
           OR (o.state = 'RETRY_WAIT' AND o.next_attempt_at > now())) AS not_due,
         greatest(o.fires_at, coalesce(o.next_attempt_at, o.fires_at)) AS due_at,
         s.status = 'cancelled' AS schedule_cancelled,
         o.cancel_requested_at IS NOT NULL AS cancel_requested,
         o.attempt_count >= o.max_attempts AS attempts_exhausted,
         now() >= o.retry_deadline AS deadline_passed,
         (o.start_deadline IS NOT NULL AND o.attempt_count = 0 AND now() > o.start_deadline)
           AS start_deadline_passed,
         ${heldPermits('o.tenant_id')} >= t.max_concurrent_runs AS tenant_at_capacity,
         (NOT (s.overlap_policy = ANY($3::text[]))
          AND EXISTS (SELECT 1 FROM occurrences r
                       WHERE r.schedule_id = o.schedule_id AND r.state = 'RUNNING'
                         AND r.id <> o.id)) AS overlapping,
         s.overlap_policy,
         greatest(0, (1 - ${tokensNow('o.tenant_id')}) / t.dispatch_rate_per_second * 1000)::float8
           AS rate_wait_ms,
         coalesce(tg.status <> 'active', false) AS target_gone,
         tg.disabled_reason AS target_disabled_reason,
         CASE WHEN tg.backoff_until > now()
              THEN extract(epoch FROM tg.backoff_until - now()) * 1000 ELSE 0 END::float8
           AS target_backoff_ms,
         coalesce(${targetRoom('tg')} <= 0, false) AS target_at_capacity,
         now() AS db_now
    FROM occurrences o
    JOIN schedules s ON s.id = o.schedule_id
    JOIN tenants t ON t.id = o.tenant_id
    LEFT JOIN targets tg ON tg.id = o.target_id AND tg.tenant_id = o.tenant_id
   WHERE o.id = $1 AND o.tenant_id = $2`;

/**
 * Ends a run that was refused at claim and can never run (cancelled, exhausted, skipped for
 * overlap or its start deadline). Only from a waiting state: a run that meanwhile started or
 * ended is left alone. $3 state, $4 reason, $5 detail.
 */
export const END_WAITING_RUN = `
  UPDATE occurrences
     SET state = $3, reason = $4, reason_detail = $5, finished_at = now(), next_attempt_at = NULL,
         updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state IN ('QUEUED', 'RETRY_WAIT')`;

/**
 * A QUEUED run that may not start yet waits with the reason: for its tenant's budget (the
 * admitter will take it; its job is acknowledged and no new one is made) or for its turn behind
 * a running run (the hand-over publishes its job). Either way it gives back the permit it held
 * if it had been admitted.
 */
export const PARK_RUN = `
  UPDATE occurrences SET reason = $3, admitted_at = NULL, updated_at = now()
   WHERE id = $1 AND tenant_id = $2 AND state = 'QUEUED'`;
