/** What else a row probe needs: more conditions on the row, another key column, a lock. */
export interface RowProbe {
  /** More conditions on the row (its partition bounds, its tenant, not deleted). */
  also?: string;
  /** The key column the probe matches, when it is not `id` (a counter keyed by its tenant). */
  key?: string;
  /** A locking clause for the row (`FOR UPDATE SKIP LOCKED`). */
  lock?: string;
}

/**
 * `columns` of the one row of `table` whose key is `id` (an outer expression), as a LATERAL item
 * named `alias`: a primary-key probe per outer row whatever the statistics of a cached generic
 * plan. OFFSET 0 keeps the outer conditions out of the subquery, so no other index matches it
 * (state conditions would let a partial index of active or waiting runs be scanned whole), and
 * nothing can turn it into a join that hashes a scan of the whole table, which `= ANY($1)` or a
 * join with an `unnest` did for small tables, once per batch. The outer item before it names the
 * rows the statement is about (an `unnest` of the batch's ids).
 */
export function rowById(
  table: string,
  alias: string,
  id: string,
  columns: string,
  { also, key = 'id', lock }: RowProbe = {},
): string {
  return `CROSS JOIN LATERAL (SELECT ${columns} FROM ${table} x WHERE x.${key} = ${id}${also ? ` AND ${also}` : ''}
                      OFFSET 0${lock ? ` ${lock}` : ''}) ${alias}`;
}

/**
 * Whether `fromWhere` (a FROM ... WHERE over one tenant's or target's rows) has a row: a probe of
 * one index entry per outer row. Not EXISTS: Postgres may run an EXISTS in an expression as a
 * hashed subplan, and a generic plan that expects few outer rows picks it, reading every waiting
 * run of every tenant on each call (measured: 3,000 waiting runs read for one tenant's budget).
 * A LIMIT inside an EXISTS would not stop that (it is dropped there); a scalar subquery with one
 * runs once per outer row.
 */
export function anyRow(fromWhere: string): string {
  return `coalesce((SELECT true ${fromWhere} LIMIT 1), false)`;
}
