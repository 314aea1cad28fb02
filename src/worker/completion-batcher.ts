import type { CompletionResult } from '../occurrences/run';
import type { Completion } from '../occurrences/run-execution.service';

interface Pending {
  completion: Completion;
  settle: { resolve: (result: CompletionResult) => void; reject: (error: unknown) => void };
}

/**
 * Gathers the completions of attempts that end close together into one transaction each
 * (RunExecutionService.completeMany): at a few hundred runs per second, per-run completion
 * transactions were most of the database's work. A completion waits at most one turn of the
 * event loop plus one transaction in flight; batches never exceed `maxBatch`, and a run is in a
 * batch once (a second completion of it waits for the next batch).
 */
export class CompletionBatcher {
  private queue: Pending[] = [];
  private flushing = false;
  private scheduled = false;

  constructor(
    private readonly completeMany: (batch: Completion[]) => Promise<CompletionResult[]>,
    private readonly maxBatch: number,
  ) {}

  complete(completion: Completion): Promise<CompletionResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ completion, settle: { resolve, reject } });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.flushing) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async completeAlone(pending: Pending): Promise<void> {
    try {
      const [result] = await this.completeMany([pending.completion]);
      pending.settle.resolve(result);
    } catch (error) {
      pending.settle.reject(error);
    }
  }

  /** One batch at a time: while it is in flight, the next one gathers. */
  private async flush(): Promise<void> {
    if (this.flushing || this.queue.length === 0) return;
    this.flushing = true;
    const batch: Pending[] = [];
    const runs = new Set<string>();
    const rest: Pending[] = [];
    for (const pending of this.queue) {
      if (batch.length < this.maxBatch && !runs.has(pending.completion.runId)) {
        runs.add(pending.completion.runId);
        batch.push(pending);
      } else {
        rest.push(pending);
      }
    }
    this.queue = rest;
    try {
      const results = await this.completeMany(batch.map((p) => p.completion));
      batch.forEach((pending, i) => pending.settle.resolve(results[i]));
    } catch (error) {
      if (batch.length === 1) batch[0].settle.reject(error);
      // One bad completion must not fail the others: each tries alone (its caller retries).
      else await Promise.all(batch.map((pending) => this.completeAlone(pending)));
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
