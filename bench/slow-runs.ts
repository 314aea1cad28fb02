/**
 * The slowest runs of a window, ranked by the sink's receipts, with the stages the ledger has
 * for each (bench/stages.ts reads them): pure, so it is tested without a database.
 */
import { firstReceipts } from './analysis';
import type { Receipt } from './sink';

/** A run's stages against its nominal instant (epoch ms), as the ledger has them. */
export interface RunStages {
  id: string;
  atMs: number;
  createdMs: number;
  claimedMs: number | null;
}

/** One of the slowest runs of a window: its instant and its stages against it, ms. */
export interface SlowRun {
  /** Seconds after `origin` (the flood's instant) of its nominal instant. */
  atSeconds: number;
  createdMs: number;
  claimedMs: number | null;
  receivedMs: number;
}

/**
 * The `count` runs whose first receipt (by run id) came latest after their instant, slowest
 * first, with their dispatch and claim beside it; runs never received are left
 * out (the verdicts count those). A tail made of neighbouring instants whose dispatches (or
 * claims) all end at the same moment is one stall of everything before that stage, not one slow
 * run after another.
 */
export function slowestRuns(
  runs: readonly RunStages[],
  receipts: readonly Receipt[],
  window: { origin: number; count: number },
): SlowRun[] {
  const receivedAt = firstReceipts(receipts, (r) => r.runId);
  return runs
    .flatMap((run) => {
      const received = receivedAt.get(run.id);
      if (received === undefined) return [];
      return [
        {
          atSeconds: (run.atMs - window.origin) / 1000,
          createdMs: run.createdMs,
          claimedMs: run.claimedMs,
          receivedMs: received - run.atMs,
        },
      ];
    })
    .sort((a, b) => b.receivedMs - a.receivedMs)
    .slice(0, window.count);
}

/** "4.065 s 54/60/66 ms, ...": each slow run's instant and its dispatched/claimed/received lags. */
export function describeSlowRuns(runs: readonly SlowRun[]): string {
  const ms = (value: number | null) => (value === null ? '-' : String(Math.round(value)));
  return runs
    .map(
      (r) =>
        `${r.atSeconds.toFixed(3)} s ${ms(r.createdMs)}/${ms(r.claimedMs)}/${ms(r.receivedMs)} ms`,
    )
    .join(', ');
}
