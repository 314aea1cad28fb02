/**
 * A schedule has at most one due-index entry. Replacing it is a delete then an insert inside
 * the transaction that changes the schedule, so the index never points at two instants.
 */
export const REMOVE_DUE_ENTRIES = `DELETE FROM due_index WHERE schedule_id = $1`;

/** REMOVE_DUE_ENTRIES for several schedules at once ($1, an array of ids). */
export const REMOVE_DUE_ENTRIES_OF = `DELETE FROM due_index WHERE schedule_id = ANY($1::uuid[])`;

/**
 * The poller's bounded range scan, in the shards this poller holds, oldest first: the entries
 * already due by the database clock and, when none is and the earliest entry is due within $3
 * ms, the entries of that one instant (the horizon), which the poller prepares ahead and
 * commits once the database clock reaches it (see WAIT_UNTIL). With $4 (the instant of a batch
 * prepared ahead and still waiting in another transaction), future entries up to $4 are left to
 * that batch: the next one looks past it, so a batch waiting for its instant never holds up the
 * preparation of the next. Cost follows the batch, not the backlog nor the total:
 * due_index_by_instant_idx (due_at, shard) answers both the earliest entry of the held shards
 * (one probe, where one per shard cost 128) and the range in the order taken, bounded by the
 * horizon (a scalar, so the bound is the index scan's: a join condition would read on past it),
 * so a batch of a 20,000-entry flood reads its 100 entries instead of sorting the 20,000
 * (due-index-plans.spec.ts). Beside another poller's entries it passes over their index
 * entries, filtered in the index, never their rows. SKIP
 * LOCKED lets pollers that briefly overlap on a shard take disjoint entries. Each row also
 * carries the transaction's now(), which the dispatch would otherwise ask for in a round trip of
 * its own. With $5 (the instant the crowded-instant lane is preparing), that instant's entries are
 * all left to the lane, due or not: what its batch leaves of them follows once it has committed,
 * in batches sized after it (a throttled flood's small ones), not in one the rounds prepared
 * meanwhile at full size.
 * $1 shards, $2 limit, $3 lookahead ms, $4 instant already being prepared (or null), $5 the
 * crowded lane's instant (or null).
 */
export const CLAIM_DUE_ENTRIES = `
  WITH horizon AS (
    SELECT greatest(now(),
                    least(now() + make_interval(secs => $3::double precision / 1000),
                          (SELECT due_at FROM due_index
                            WHERE shard = ANY($1::smallint[])
                              AND ($4::timestamptz IS NULL OR due_at <= now()
                                   OR due_at > $4::timestamptz)
                              AND ($5::timestamptz IS NULL OR due_at <> $5::timestamptz)
                            ORDER BY due_at LIMIT 1))) AS at)
  SELECT d.shard, d.due_at, d.due_at::text AS due_at_exact, d.schedule_id, d.revision,
         h.at AS horizon, h.at::text AS horizon_exact, now() AS transaction_now
    FROM due_index d, horizon h
   WHERE d.shard = ANY($1::smallint[]) AND d.due_at <= (SELECT at FROM horizon)
     AND ($4::timestamptz IS NULL OR d.due_at <= now() OR d.due_at > $4::timestamptz)
     AND ($5::timestamptz IS NULL OR d.due_at <> $5::timestamptz)
   ORDER BY d.due_at
   LIMIT $2
   FOR UPDATE OF d SKIP LOCKED`;

/**
 * The poller's fresh lane, beside a backlog (a full batch of CLAIM_DUE_ENTRIES, oldest first):
 * the entries in the same shards that are later than anything the backlog's batches took ($2,
 * the due_at of the last), newest first. One tenant's flood of entries due at one instant then
 * cannot hold back another tenant's entry that falls due after it: the lane's small transactions
 * run beside the backlog's large ones, and SKIP LOCKED keeps the two disjoint, while the
 * oldest-first batches guarantee the backlog progresses. Like CLAIM_DUE_ENTRIES, what is due by
 * now or, when nothing is, the next instant within $4 ms (the horizon, committed at once it is
 * reached), future entries up to $5 (an instant a batch of the lane is waiting for) left to that
 * batch. Bounded range scans of due_index_by_instant_idx past $2 (forwards from the floor for
 * the horizon, backwards from the horizon, a scalar so that it bounds the scan, for the batch),
 * never a scan of the backlog nor of the entries due later. $1 shards, $3 limit.
 */
export const CLAIM_FRESHEST_DUE = `
  WITH horizon AS (
    SELECT greatest(now(),
                    least(now() + make_interval(secs => $4::double precision / 1000),
                          (SELECT due_at FROM due_index
                            WHERE shard = ANY($1::smallint[]) AND due_at > $2::timestamptz
                              AND ($5::timestamptz IS NULL OR due_at <= now()
                                   OR due_at > $5::timestamptz)
                            ORDER BY due_at LIMIT 1))) AS at)
  SELECT d.shard, d.due_at, d.due_at::text AS due_at_exact, d.schedule_id, d.revision,
         h.at AS horizon, h.at::text AS horizon_exact, now() AS transaction_now
    FROM due_index d, horizon h
   WHERE d.shard = ANY($1::smallint[]) AND d.due_at > $2::timestamptz
     AND d.due_at <= (SELECT at FROM horizon)
     AND ($5::timestamptz IS NULL OR d.due_at <= now() OR d.due_at > $5::timestamptz)
   ORDER BY d.due_at DESC
   LIMIT $3
   FOR UPDATE OF d SKIP LOCKED`;

/**
 * The poller's crowded-instant lane: the earliest instant not yet due, within $2 ms by the
 * database clock, that at least $3 entries of the held shards share, with how many do and how
 * many ms remain until it; when none does, the earliest instant within $2 ms at all (so the
 * lane knows whether to look again soon), and no row when no entry is due within $2 ms.
 * Instants the lane served lately ($5) are left out. Reads at most $4 entries of
 * due_index_by_instant_idx in instant order (an index-only range scan from now()): a crowd
 * behind more than $4 earlier entries is found later, closer to its instant, or not at all and
 * then dispatched by the poller's own rounds as before. $1 shards.
 */
export const NEXT_CROWDED_INSTANT = `
  SELECT w.due_at, w.due_at::text AS due_at_exact, count(*)::int AS entries,
         (extract(epoch FROM w.due_at - now()) * 1000)::float8 AS wait_ms
    FROM (SELECT due_at FROM due_index
           WHERE shard = ANY($1::smallint[]) AND due_at > now()
             AND due_at <= now() + make_interval(secs => $2::double precision / 1000)
             AND due_at <> ALL($5::timestamptz[])
           ORDER BY due_at
           LIMIT $4) w
   GROUP BY w.due_at
   ORDER BY count(*) >= $3 DESC, w.due_at
   LIMIT 1`;

/**
 * The crowded-instant lane's batch: up to $3 entries of the held shards due at exactly $2 (text
 * to the microsecond, as NEXT_CROWDED_INSTANT gave it), locked; that instant is the horizon the
 * dispatch commits at (see WAIT_UNTIL), so nothing of it is visible before it is due. SKIP
 * LOCKED: entries of the instant another batch holds are that batch's. One range of
 * due_index_by_instant_idx (due_at, shard). $1 shards.
 */
export const CLAIM_INSTANT_ENTRIES = `
  SELECT d.shard, d.due_at, d.due_at::text AS due_at_exact, d.schedule_id, d.revision,
         d.due_at AS horizon, d.due_at::text AS horizon_exact, now() AS transaction_now
    FROM due_index d
   WHERE d.shard = ANY($1::smallint[]) AND d.due_at = $2::timestamptz
   LIMIT $3
   FOR UPDATE OF d SKIP LOCKED`;

/**
 * Sleeps in the database until its clock reaches $1 and says whether it has: a dispatch
 * prepared ahead commits only after its instant, so no run or job exists before it is due.
 * The subquery (volatile, never flattened) sleeps before the outer clock is read.
 */
export const WAIT_UNTIL = `
  SELECT clock_timestamp() >= $1::timestamptz AS reached
    FROM (SELECT pg_sleep(greatest(0, extract(epoch FROM $1::timestamptz - clock_timestamp())))) slept`;

/**
 * Deletes claimed entries by their exact keys, in one statement per batch: one probe of the
 * primary key, which leads with the schedule, per entry (due_at travels as text, which keeps the
 * microseconds a JavaScript Date would drop). The instant is compared as an expression so that
 * no plan probes due_index_by_instant_idx by (due_at, shard) instead: a generic plan took that
 * smaller index, and inside a flood of one instant each of its probes read every entry of the
 * shard at that instant (about 80 of a 10,000-entry flood) to keep one
 * (due-index-plans.spec.ts).
 */
export const DELETE_DUE_ENTRIES = `
  DELETE FROM due_index d
   USING unnest($1::smallint[], $2::text[], $3::uuid[]) AS x(shard, due_at, schedule_id)
   WHERE d.schedule_id = x.schedule_id AND d.shard = x.shard
     AND d.due_at + interval '0' = x.due_at::timestamptz`;

/**
 * Writes entries in one statement and wakes the pollers (delivered at commit) when the earliest
 * is due within $6 ms by the database clock (WAKE_HORIZON_MS): a poller may be asleep until then.
 */
export const INSERT_DUE_ENTRIES = `
  WITH added AS (
    INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
    SELECT * FROM unnest($1::smallint[], $2::timestamptz[], $3::uuid[], $4::uuid[], $5::int[])
    RETURNING due_at)
  SELECT pg_notify('dueline_due', 'batch')
    FROM (SELECT min(due_at) AS first FROM added) a
   WHERE a.first < clock_timestamp() + make_interval(secs => $6::double precision / 1000)`;

/**
 * The earliest entry of the held shards later than $2 (null: any), and how many ms until it is
 * due by the database clock (0: due now); both null when there is none. With $3 (an instant a
 * batch of the fresh lane is waiting for), entries not yet due up to $3 are that batch's and left
 * out. One probe of due_index_by_instant_idx, never a scan of the rest: the floor is a bound of
 * its range (coalesce keeps it one in a generic plan too), so the fresh lane's look past a flood
 * of one instant skips the flood's entries instead of reading them; other pollers' entries it
 * passes over in the index. OFFSET 0 keeps the probe one subplan, not one per use of its value.
 * The poller's wake-up timer asks with no floor, the fresh lane with the backlog's latest
 * instant. $1 shards.
 */
export const NEXT_DUE_IN_SHARDS = `
  SELECT x.due_at AS next_due_at,
         CASE WHEN x.due_at IS NOT NULL -- greatest() would turn "none" into 0
              THEN greatest(0, extract(epoch FROM x.due_at - now()) * 1000) END::float8
           AS wait_ms
    FROM (SELECT (SELECT due_at FROM due_index
                   WHERE shard = ANY($1::smallint[])
                     AND due_at > coalesce($2::timestamptz, '-infinity')
                     AND ($3::timestamptz IS NULL OR due_at <= now() OR due_at > $3::timestamptz)
                   ORDER BY due_at LIMIT 1) AS due_at
          OFFSET 0) x`;

/** The channel INSERT_DUE_ENTRIES notifies. */
export const DUE_CHANNEL = 'dueline_due';
