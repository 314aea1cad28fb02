import type { DispatchResult } from './due-dispatcher';

/** Fresh entries one transaction of the lane takes: small, so it commits in a few ms. */
export const FRESH_LANE_BATCH = 100;
/** The lane's pause after a round that found less than a full batch. */
const FRESH_LANE_PAUSE_MS = 5;

/**
 * The poller's fresh lane. A backlog (a full batch, oldest first) is drained in large batches
 * that take 100 ms or more each; an entry that falls due meanwhile, after the backlog's latest
 * instant, would wait for the batches ahead of it. So while a backlog drains, the lane
 * dispatches those entries beside it in small transactions of their own: one tenant's flood at
 * one instant does not hold back another tenant's entry that falls due after it. SKIP LOCKED
 * keeps the lane's entries and the backlog's disjoint; the oldest-first batches still
 * guarantee the backlog progresses. Started (and moved on) by each full batch, stopped when
 * the backlog is drained; the poller's own rounds serve fresh entries after that.
 */
export class FreshLane {
  /** The latest instant the backlog's batches took: the lane serves what is due after it. */
  private floor: string | null = null;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly serve: (after: string) => Promise<DispatchResult>,
    private readonly failed: (error: unknown) => void,
  ) {}

  /** A full batch took entries up to `lastDueAtExact`: serve what falls due after it. */
  follow(lastDueAtExact: string): void {
    this.floor = lastDueAtExact;
    this.loop ??= this.run().finally(() => (this.loop = null));
  }

  /** The backlog is drained (or the poller stops): the lane ends after its current round. */
  async stop(): Promise<void> {
    this.floor = null;
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.floor !== null) {
      let result: DispatchResult;
      try {
        result = await this.serve(this.floor);
      } catch (error) {
        // Its entries stay due; the backlog's next full batch starts the lane again.
        this.failed(error);
        return;
      }
      if (result.entries < FRESH_LANE_BATCH && this.floor !== null) {
        await new Promise((resolve) => setTimeout(resolve, FRESH_LANE_PAUSE_MS));
      }
    }
  }
}
