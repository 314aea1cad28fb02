/**
 * Round trips this process has made to Postgres: one per ReadyForQuery the server sent on a
 * dueline connection (one per simple query, one per extended-protocol Sync, i.e. per
 * `client.query`, plus one per connection at login). Process-wide on purpose: TypeORM's pool,
 * pg-boss's pool and the probes all count, and the metric is "what this process asked of the
 * database", which is what the benchmark divides by the runs delivered.
 */
let completed = 0;

/**
 * Waits: statements written to a connection that had nothing else in flight, so the server had
 * to be woken for it and this process then waited for its answer. Pipelined statements (written
 * behind another one whose answer has not come) share their predecessor's wait. On a loaded host
 * a wait, not a statement, is what costs CPU on both sides (each is a wake-up), so this counts
 * what pipelining saves where round trips cannot tell.
 */
let waits = 0;

/** Called by PrimaryClient for every ReadyForQuery message. */
export function countRoundTrip(): void {
  completed++;
}

/** Called by PrimaryClient for a statement written while its connection had none in flight. */
export function countWait(): void {
  waits++;
}

/** Round trips completed so far by this process. */
export function databaseRoundTrips(): number {
  return completed;
}

/** Waits so far (see `waits`). */
export function databaseWaits(): number {
  return waits;
}
