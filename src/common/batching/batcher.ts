interface Pending<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (error: unknown) => void;
}

export interface BatcherOptions<I> {
  maxBatch: number;
  /** Items with the same id never share a batch: a second one waits for the next. */
  idOf: (item: I) => string;
}

/**
 * Gathers work that arrives close together into one call of `run` (one statement or
 * transaction for many runs) while a previous call is in flight: each caller waits at most for
 * the batch in flight plus its own. One batch at a time per batcher; batches never exceed
 * `maxBatch`. `run` answers each item, in order. If a batch fails, its items are tried one by
 * one, so one bad item fails alone.
 */
export class Batcher<I, O> {
  private queue: Array<Pending<I, O>> = [];
  private flushing = false;
  private scheduled = false;

  constructor(
    private readonly run: (batch: I[]) => Promise<O[]>,
    private readonly options: BatcherOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Nothing queued and nothing in flight. */
  get idle(): boolean {
    return !this.flushing && !this.scheduled && this.queue.length === 0;
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch: Array<Pending<I, O>> = [];
    const ids = new Set<string>();
    const rest: Array<Pending<I, O>> = [];
    for (const pending of this.queue) {
      const id = this.options.idOf(pending.item);
      if (batch.length < this.options.maxBatch && !ids.has(id)) {
        ids.add(id);
        batch.push(pending);
      } else {
        rest.push(pending);
      }
    }
    this.queue = rest;
    try {
      const results = await this.run(batch.map((p) => p.item));
      batch.forEach((pending, i) => pending.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) batch[0].reject(error);
      else await Promise.all(batch.map((pending) => this.runAlone(pending)));
    } finally {
      this.flushing = false;
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
