import type { DispatchResult } from './due-dispatcher';

/** Fresh entries one transaction of the lane takes: small, so it commits in a few ms. */
export const FRESH_LANE_BATCH = 100;
/**
 * The longest the lane sleeps between two looks: an entry created meanwhile (a NOTIFY wakes the
 * lane sooner) or one the backlog's batch in flight had locked is found by the next look.
 */
const FRESH_LANE_MAX_SLEEP_MS = 50;
/** The lane's pause after a round that found its due entries locked by the backlog's batch. */
const FRESH_LANE_LOCKED_PAUSE_MS = 10;

/** What the lane needs of the poller: a look at the next fresh entry, and a dispatch. */
export interface FreshLaneDispatch {
  /** Ms until the earliest entry later than `after` is due (0: now), null when there is none. */
  nextDueInMs(after: string): Promise<number | null>;
  /** One transaction over the entries due now later than `after`, newest first. */
  serve(after: string): Promise<DispatchResult>;
}

/**
 * The poller's fresh lane. A backlog (a full batch, oldest first) is drained in large batches
 * that take 100 ms or more each; an entry that falls due meanwhile, after the backlog's latest
 * instant, would wait for the batches ahead of it. So while a backlog drains, the lane
 * dispatches those entries beside it in small transactions of their own: one tenant's flood at
 * one instant does not hold back another tenant's entry that falls due after it. SKIP LOCKED
 * keeps the lane's entries and the backlog's disjoint; the oldest-first batches still
 * guarantee the backlog progresses. Between rounds the lane sleeps until its next entry is due
 * (one statement outside any transaction tells it), so it costs the busy database next to
 * nothing while none is. Started (and moved on) by each full batch, stopped when the backlog
 * is drained; the poller's own rounds serve fresh entries after that.
 */
export class FreshLane {
  /** The latest instant the backlog's batches took: the lane serves what is due after it. */
  private floor: string | null = null;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;

  constructor(
    private readonly dispatch: FreshLaneDispatch,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** A full batch took entries up to `lastDueAtExact`: serve what falls due after it. */
  follow(lastDueAtExact: string): void {
    this.floor = lastDueAtExact;
    this.loop ??= this.run().finally(() => (this.loop = null));
  }

  /** New entries may be due soon (a NOTIFY): look again now. */
  wake(): void {
    this.wakeUp?.();
  }

  /** The backlog is drained (or the poller stops): the lane ends after its current round. */
  async stop(): Promise<void> {
    this.floor = null;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    try {
      while (this.floor !== null) {
        const inMs = await this.dispatch.nextDueInMs(this.floor);
        if (this.floor === null) return;
        if (inMs === null || inMs > 0) {
          await this.sleep(Math.min(inMs ?? FRESH_LANE_MAX_SLEEP_MS, FRESH_LANE_MAX_SLEEP_MS));
          continue;
        }
        const result = await this.dispatch.serve(this.floor);
        if (result.entries === 0) await this.sleep(FRESH_LANE_LOCKED_PAUSE_MS);
      }
    } catch (error) {
      // Its entries stay due; the backlog's next full batch starts the lane again.
      this.failed(error);
    }
  }

  /** Sleeps `ms`, or until wake() or stop(), whichever comes first. */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, Math.ceil(ms)));
      this.wakeUp = done;
    });
  }
}
