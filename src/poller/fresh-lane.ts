import type { DispatchResult } from './due-dispatcher';
import { WakeableSleep } from './wakeable-sleep';

/** Fresh entries one transaction of the lane takes: small, so it commits in a few ms. */
export const FRESH_LANE_BATCH = 100;
/**
 * The longest the lane sleeps between two looks: an entry created meanwhile (a NOTIFY wakes the
 * lane sooner) or one the backlog's batch in flight had locked is found by the next look.
 */
const FRESH_LANE_MAX_SLEEP_MS = 50;
/** The lane's pause after a round that found its due entries locked by the backlog's batch. */
const FRESH_LANE_LOCKED_PAUSE_MS = 10;
/** Batches of the lane open at once, waiting for their instants (each holds a connection). */
const FRESH_LANE_MAX_WAITING = 2;

/** What the lane needs of the poller: a look at the next fresh entry, and a dispatch. */
export interface FreshLaneDispatch {
  /**
   * Ms until the earliest entry later than `after` is due (0: now), null when there is none;
   * future entries up to `prepared` (a batch of the lane waits for that instant) left out.
   */
  nextDueInMs(after: string, prepared: string | null): Promise<number | null>;
  /**
   * One transaction over the entries later than `after`, newest first: those due now or, when
   * none is, the next instant's within the lookahead, future ones up to `prepared` left out.
   * `onWaiting` is called if the batch, prepared, waits for its instant before it commits.
   */
  serve(
    after: string,
    prepared: string | null,
    onWaiting: (batch: { instant: string; full: boolean }) => void,
  ): Promise<DispatchResult>;
}

/**
 * The poller's fresh lane. A backlog (a full batch, oldest first) is drained in large batches
 * that take 100 ms or more each; an entry that falls due meanwhile, after the backlog's latest
 * instant, would wait for the batches ahead of it. So while a backlog drains, the lane
 * dispatches those entries beside it in small transactions of their own: one tenant's flood at
 * one instant does not hold back another tenant's entry that falls due after it. SKIP LOCKED
 * keeps the lane's entries and the backlog's disjoint; the oldest-first batches still
 * guarantee the backlog progresses.
 *
 * Like the poller's own rounds, the lane prepares the batch of an instant within the lookahead
 * ahead and commits it when the database clock reaches the instant, and prepares the next
 * instant's beside a batch that waits: on a machine the backlog keeps busy a transaction takes
 * tens of milliseconds, which would otherwise be added to every entry's dispatch. Between rounds
 * it sleeps until its next entry is within the lookahead (one statement outside any transaction
 * tells it), so it costs the busy database next to nothing while none is. Started (and moved on)
 * by each full batch, stopped when the backlog is drained; the poller's own rounds serve fresh
 * entries after that.
 */
export class FreshLane {
  /** The latest instant the backlog's batches took: the lane serves what is due after it. */
  private floor: string | null = null;
  private loop: Promise<void> | null = null;
  private readonly pause = new WakeableSleep();

  constructor(
    private readonly dispatch: FreshLaneDispatch,
    private readonly lookaheadMs: number,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** A full batch took entries up to `lastDueAtExact`: serve what falls due after it. */
  follow(lastDueAtExact: string): void {
    this.floor = lastDueAtExact;
    this.loop ??= this.run().finally(() => (this.loop = null));
  }

  /** New entries may be due soon (a NOTIFY): look again now. */
  wake(): void {
    this.pause.wake();
  }

  /** The backlog is drained (or the poller stops): the lane ends after its current round. */
  async stop(): Promise<void> {
    this.floor = null;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    const waiting = new Set<Promise<void>>();
    /** The instant of the latest batch waiting for it, while one is. */
    let prepared: string | null = null;
    let failure: unknown = null;
    try {
      while (this.floor !== null && failure === null) {
        const floor = this.floor;
        const inMs = await this.dispatch.nextDueInMs(floor, prepared);
        if (this.floor === null) break;
        if (inMs === null || inMs > this.lookaheadMs) {
          const untilReach = inMs === null ? FRESH_LANE_MAX_SLEEP_MS : inMs - this.lookaheadMs;
          await this.pause.sleep(Math.min(untilReach, FRESH_LANE_MAX_SLEEP_MS));
          continue;
        }
        let startedWaiting!: (batch: { instant: string; full: boolean }) => void;
        const ahead = new Promise<{ instant: string; full: boolean }>(
          (resolve) => (startedWaiting = resolve),
        );
        const serving = this.dispatch.serve(floor, prepared, (batch) => startedWaiting(batch));
        const outcome = await Promise.race([
          serving.then((result) => ({ result, batch: null })),
          ahead.then((batch) => ({ result: null, batch })),
        ]);
        if (outcome.result) {
          if (outcome.result.entries === 0) await this.pause.sleep(FRESH_LANE_LOCKED_PAUSE_MS);
          continue;
        }
        if (outcome.batch.full) {
          // More entries of that instant remain: they follow once this batch has committed.
          await serving;
          continue;
        }
        const instant = outcome.batch.instant;
        const settled: Promise<void> = serving
          .then(
            () => undefined,
            (error: unknown) => {
              failure ??= error;
            },
          )
          .finally(() => {
            waiting.delete(settled);
            if (prepared === instant) prepared = null;
          });
        waiting.add(settled);
        prepared = instant;
        if (waiting.size >= FRESH_LANE_MAX_WAITING) await Promise.race(waiting);
      }
    } catch (error) {
      failure ??= error;
    }
    await Promise.all(waiting);
    // Its entries stay due; the backlog's next full batch starts the lane again.
    if (failure !== null) this.failed(failure);
  }
}
