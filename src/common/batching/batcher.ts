import { performance } from 'node:perf_hooks';

interface Pending<I, O> {
  item: I;
  /** performance.now() at its submit. */
  submittedAt: number;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<I> {
  maxBatch: number;
  /** Items with the same id never share a batch: a second one waits for the next. */
  idOf: (item: I) => string;
  /**
   * Batches in flight at once (default 1). An item whose id is in a batch in flight waits for a
   * later batch, so one id is never in two calls of `run` at once.
   */
  maxInFlight?: number;
  /**
   * How long a batch may wait, from its first item's submit, for others to join it (default 0:
   * it goes on the next turn of the event loop). For work whose callers can wait a little and
   * whose cost is per call: items that arrive a few milliseconds apart then share one call.
   * A full batch goes at once.
   */
  lingerMs?: number;
}

/**
 * Gathers work that arrives close together into one call of `run` (one statement or
 * transaction for many runs): what is submitted in one turn of the event loop, and what comes
 * while `maxInFlight` batches are in flight (one by default), goes in one batch. Each caller
 * waits at most for a batch in flight plus its own. Batches never exceed `maxBatch`. `run`
 * answers each item, in order. If a batch fails, its items are tried one by one, so one bad
 * item fails alone.
 */
export class Batcher<I, O> {
  private queue: Array<Pending<I, O>> = [];
  private inFlight = 0;
  /** Ids of the items in the batches in flight (and in the one being gathered). */
  private readonly busy = new Set<string>();
  private scheduled = false;
  /** The linger's timer while the batch being gathered waits out its linger. */
  private lingering: NodeJS.Timeout | null = null;
  private readonly maxInFlight: number;
  private readonly lingerMs: number;

  constructor(
    private readonly run: (batch: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions<I>,
  ) {
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 1);
    this.lingerMs = Math.max(0, options.lingerMs ?? 0);
  }

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, submittedAt: performance.now(), resolve, reject });
      this.schedule();
    });
  }

  /** Nothing queued and nothing in flight. */
  get idle(): boolean {
    return this.inFlight === 0 && !this.scheduled && this.queue.length === 0;
  }

  private schedule(): void {
    // A full batch does not wait for the linger.
    const full = this.queue.length >= this.options.maxBatch;
    if (this.lingering && full) {
      clearTimeout(this.lingering);
      this.lingering = null;
      this.scheduled = false;
    }
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    const go = () => {
      this.lingering = null;
      this.scheduled = false;
      void this.flush();
    };
    // The oldest item waits out the rest of its linger.
    const waitMs = full ? 0 : this.lingerMs - (performance.now() - this.queue[0].submittedAt);
    if (waitMs > 0) this.lingering = setTimeout(go, waitMs);
    else setImmediate(go);
  }

  private async flush(): Promise<void> {
    if (this.inFlight >= this.maxInFlight || this.queue.length === 0) return;
    const batch: Array<Pending<I, O>> = [];
    const rest: Array<Pending<I, O>> = [];
    for (const pending of this.queue) {
      const id = this.options.idOf(pending.item);
      // `busy` holds this batch's ids too: a second item of an id waits for a later batch.
      if (batch.length < this.options.maxBatch && !this.busy.has(id)) {
        this.busy.add(id);
        batch.push(pending);
      } else {
        rest.push(pending);
      }
    }
    // Only items whose ids are in flight: they wait for those batches to end.
    if (batch.length === 0) return;
    this.queue = rest;
    this.inFlight++;
    // What this batch left (beyond maxBatch) may go beside it.
    if (this.queue.length > 0) this.schedule();
    try {
      const results = await this.run(batch.map((p) => p.item));
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) batch[0].reject(error);
      else await Promise.all(batch.map((pending) => this.runAlone(pending)));
    } finally {
      this.inFlight--;
      for (const pending of batch) this.busy.delete(this.options.idOf(pending.item));
      if (this.queue.length > 0) this.schedule();
    }
  }

  private async runAlone(pending: Pending<I, O>): Promise<void> {
    try {
      const [result] = await this.run([pending.item]);
      pending.resolve(result);
    } catch (error) {
      pending.reject(error);
    }
  }
}
