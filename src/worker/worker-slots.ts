import { roomLeft, type HandoffRoom } from '../handoff';

/** Which queue a batch of jobs came from: `high` runs', or everyone else's. */
export type WorkerLane = 'high' | 'other';

/**
 * A worker's slots: at most `concurrency` runs at once, of which `high` runs may take any and the
 * others never the share kept for `high` runs. A run's slot is taken before its claim is sent and
 * given back when its attempt ends (or when it was not claimed): the fetch loops and the
 * handed-off runs take slots from this one count, and a slot is taken in the same synchronous
 * step that found it free, so no two of them ever count one free slot twice.
 */
export class WorkerSlots {
  /** The slots outside the share reserved for `high` runs. */
  readonly otherSlots: number;
  private readonly used: Record<WorkerLane, number> = { high: 0, other: 0 };
  /** Settled at the next change; made only when someone waits for one. */
  private changed: { promise: Promise<void>; resolve: () => void } | null = null;
  private listener: (() => void) | null = null;

  constructor(private readonly limits: { concurrency: number; reservedHighSharePercent: number }) {
    const { concurrency, reservedHighSharePercent } = limits;
    this.otherSlots = concurrency - Math.floor((concurrency * reservedHighSharePercent) / 100);
  }

  get concurrency(): number {
    return this.limits.concurrency;
  }

  /** Free slots now: any for a `high` run, those outside the reserved share for the others. */
  room(): HandoffRoom {
    return roomLeft({ high: this.limits.concurrency, other: this.otherSlots }, this.used);
  }

  /** Slots in use, of `lane` only if given. */
  inUse(lane?: WorkerLane): number {
    return lane ? this.used[lane] : this.used.high + this.used.other;
  }

  /** Takes `count` slots of `lane` if they are free now. */
  tryTake(lane: WorkerLane, count: number): boolean {
    if (this.room()[lane] < count) return false;
    this.update(lane, count);
    return true;
  }

  /**
   * Takes `count` slots of `lane` as soon as they are free; false if they were not by `deadline`
   * (epoch ms), or if `abandon()` says so before they are (asked first, and at every change).
   */
  async take(
    lane: WorkerLane,
    count: number,
    deadline = Number.POSITIVE_INFINITY,
    abandon: () => boolean = () => false,
  ): Promise<boolean> {
    for (;;) {
      if (abandon()) return false;
      if (this.tryTake(lane, count)) return true;
      const left = deadline - Date.now();
      if (left <= 0) return false;
      let timer: NodeJS.Timeout | undefined;
      const late = Number.isFinite(left)
        ? new Promise<void>((done) => (timer = setTimeout(done, left)))
        : null;
      await (late ? Promise.race([this.change(), late]) : this.change());
      clearTimeout(timer);
    }
  }

  /** Resolves once `count` slots of `lane` are free (without taking them). */
  async whenFree(lane: WorkerLane, count: number): Promise<void> {
    while (this.room()[lane] < count) await this.change();
  }

  /** Gives back `count` slots of `lane` (runs not claimed, attempts ended). */
  release(lane: WorkerLane, count: number): void {
    if (count > 0) this.update(lane, -count);
  }

  /** Calls `listener` whenever the slots in use change (one listener: the room report). */
  watch(listener: () => void): void {
    this.listener = listener;
  }

  /** Settles at the next change of the slots in use. */
  private change(): Promise<void> {
    if (!this.changed) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.changed = { promise, resolve };
    }
    return this.changed.promise;
  }

  private update(lane: WorkerLane, delta: number): void {
    this.used[lane] += delta;
    const changed = this.changed;
    this.changed = null;
    changed?.resolve();
    this.listener?.();
  }
}
