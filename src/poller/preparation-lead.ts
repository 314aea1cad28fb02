/** What a batch's preparation is assumed to cost per entry before any has been measured. */
export const INITIAL_MS_PER_ENTRY = 0.5;
/** Weight of the latest measurement in the running estimate. */
const SMOOTHING = 0.3;
/** Headroom over the estimate: a busy machine prepares more slowly than the average says. */
const SAFETY_FACTOR = 1.5;
/** Fixed part of a preparation (round trips, the statements' fixed cost), ms. */
const FIXED_MS = 20;

/**
 * How long before a crowded instant its batch must start preparing so that it is ready, waiting
 * for the instant, when the instant comes: the batch's entries times a running estimate of the
 * cost of one (measured from the lane's own batches, so it follows the machine's load), with
 * headroom, at least `minMs` and at most `maxMs`. Starting earlier than needed costs nothing in
 * correctness (the batch commits at the instant, not before) but holds the batch's schedules,
 * and from its admission on its tenants' permit locks, for longer.
 */
export class PreparationLead {
  private msPerEntry: number;

  /** `initialMsPerEntry`: the cost of an entry assumed until a batch has been measured. */
  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
    initialMsPerEntry = INITIAL_MS_PER_ENTRY,
  ) {
    this.msPerEntry = initialMsPerEntry;
  }

  /** Milliseconds ahead of its instant to start a batch of `entries`. */
  msFor(entries: number): number {
    const estimate = FIXED_MS + SAFETY_FACTOR * this.msPerEntry * entries;
    return Math.min(this.maxMs, Math.max(this.minMs, Math.ceil(estimate)));
  }

  /**
   * A batch of `entries` took `ms` to prepare (or at least that long: one that was not ready by
   * its instant reports its whole duration).
   */
  observe(entries: number, ms: number): void {
    if (entries <= 0 || !Number.isFinite(ms) || ms < 0) return;
    const perEntry = Math.max(0, ms - FIXED_MS) / entries;
    this.msPerEntry = SMOOTHING * perEntry + (1 - SMOOTHING) * this.msPerEntry;
  }
}
