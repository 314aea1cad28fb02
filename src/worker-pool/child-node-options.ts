/**
 * The young generation a worker process starts with, MiB per semi-space: V8's own default
 * maximum on 64-bit, which a worker under load grows to anyway. V8 starts it at 1 MiB and grows
 * it only as it sees the allocation rate, so a worker that starts into load (a restart, a
 * deploy) spent its first seconds in scavenges, on top of its code not being optimised yet:
 * at steady 1,000 runs/s on 2 cores, its first 5 s took 4.3 s of CPU against 2.9 s later,
 * and the runs due then were 1-2 s late. Starting at 8 MiB did not help; 16 costs 5-15 MB of
 * peak RSS (README, "Roles and replicas").
 */
export const WORKER_MIN_SEMI_SPACE_MB = 16;

/**
 * Node flags of a worker process: the primary's own (a profiler's, say, applies to its children
 * too), and the young generation's starting size unless those set one.
 */
export function workerExecArgv(primaryExecArgv: readonly string[]): string[] {
  const setsYoungGeneration = primaryExecArgv.some((flag) =>
    /^--(min[-_]semi[-_]space[-_]size|semi[-_]space[-_]growth[-_]factor)(=|$)/.test(flag),
  );
  return setsYoungGeneration
    ? [...primaryExecArgv]
    : [...primaryExecArgv, `--min-semi-space-size=${WORKER_MIN_SEMI_SPACE_MB}`];
}
