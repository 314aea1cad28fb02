/**
 * The history tables (runs and attempts) are range-partitioned by the run's `scheduled_at`. A
 * statement about known runs prunes to their partitions with
 * `scheduled_at >= $from AND scheduled_at < $until` over the instants' lowest and highest (plus a
 * millisecond, which a JavaScript Date cannot resolve: a stored instant with microseconds is still
 * inside): a range of scalar parameters prunes in a generic plan
 * too (at executor start; the ledger's statements are prepared, see prepared-statements.ts),
 * where `scheduled_at = ANY($array)` would not (PostgreSQL prunes by an array only when it is a
 * constant, i.e. in a custom plan). An instant the caller does not know (the HTTP worker contract
 * names a run by id alone) makes the range unbounded: every partition is searched.
 */
export type InstantBounds = [from: Date | '-infinity', until: Date | 'infinity'];

export const UNBOUNDED: InstantBounds = ['-infinity', 'infinity'];

/** The half-open range covering `instants`; unbounded if any is unknown (or there are none). */
export function instantBounds(instants: ReadonlyArray<Date | null | undefined>): InstantBounds {
  let from: Date | null = null;
  let to: Date | null = null;
  for (const at of instants) {
    if (!at) return UNBOUNDED;
    if (!from || at < from) from = at;
    if (!to || at > to) to = at;
  }
  return from && to ? [from, new Date(to.getTime() + 1)] : UNBOUNDED;
}

/**
 * Partition pruning for a statement about known runs: their scheduled_at (the partition key) as
 * a half-open range of two scalar parameters (`from`, `until`: instantBounds' pair), so the
 * history partitions outside it are pruned in a custom plan and, at executor start, in the
 * generic plan a prepared statement settles on (an array parameter, `= ANY($n)`, prunes in
 * custom plans only). An unbounded range (-infinity, infinity) searches every partition, as for
 * a lookup by id alone. `alias` is the runs' (or attempts') table alias.
 */
export function inPartitionsOf(alias: string, from: string, until: string): string {
  return `${alias}.scheduled_at >= ${from}::timestamptz AND ${alias}.scheduled_at < ${until}::timestamptz`;
}
