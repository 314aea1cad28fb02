import { setFlagsFromString } from 'node:v8';

/**
 * Bounds how far this process's JavaScript heap grows between full collections: after each one,
 * V8 lets the old generation reach (1 + percent/100) times what survived it before the next.
 * Left to itself, V8 picks a factor of up to 4 when collections are cheap, and a busy dueline
 * process (whose live data is ~50 MB) grew to 200-250 MB of mostly garbage between them: a
 * 100,000-run instant took both processes of one `npm start` to ~600 MB resident, against ~370
 * MB at 50 %, for about 8 % more of the service's CPU while a burst churns the heap
 * (bench/RESULTS.md). V8 reads the factor at every full collection, so setting it once the
 * process runs takes effect from the next one. 0 leaves V8's own. Never a hard limit: a process
 * that needs more heap still gets it.
 */
export function limitHeapGrowth(percent: number): void {
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
