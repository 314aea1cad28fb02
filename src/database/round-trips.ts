/**
 * Round trips this process has made to Postgres: one per ReadyForQuery the server sent on a
 * dueline connection (one per simple query, one per extended-protocol Sync, i.e. per
 * `client.query`, plus one per connection at login). Process-wide on purpose: TypeORM's pool,
 * pg-boss's pool and the probes all count, and the metric is "what this process asked of the
 * database", which is what the benchmark divides by the runs delivered.
 */
let completed = 0;

/** Called by PrimaryClient for every ReadyForQuery message. */
export function countRoundTrip(): void {
  completed++;
}

/** Round trips completed so far by this process. */
export function databaseRoundTrips(): number {
  return completed;
}
