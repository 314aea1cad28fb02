import { lagStats, occurrenceKey, receiptKey, type ExpectedOccurrence } from './analysis';
import type { Receipt, Sink } from './sink';

export interface ObserveOptions {
  label: string;
  sink: Sink;
  /** The measured window (epoch ms): occurrences due in it are the ones judged. */
  window: { from: number; to: number };
  /** What should have arrived by now (read at the end, and for progress). */
  expected: () => ExpectedOccurrence[];
  /** After the window, how long to wait at most for stragglers (retries after a crash). */
  drainMs: number;
  /** Progress line interval. */
  everyMs?: number;
  /** Extra text for the progress line (e.g. feeder state). */
  status?: () => string;
  /** Called once per tick, e.g. to kill a replica at the right moment. */
  onTick?: (elapsedMs: number) => Promise<void> | void;
}

/**
 * Waits out the window, printing one progress line every few seconds, then waits (bounded) until
 * every expected occurrence has arrived. Never loops unbounded: the window plus drainMs is the most
 * it waits.
 */
export async function observe(options: ObserveOptions): Promise<{ drainedMs: number }> {
  const { sink, window, label } = options;
  const everyMs = options.everyMs ?? 5000;
  const received = new Set<string>();
  let recent: Receipt[] = [];
  for (const r of sink.all()) received.add(receiptKey(r));
  const unsubscribe = sink.onReceipt((r) => {
    received.add(receiptKey(r));
    recent.push(r);
  });
  const started = Date.now();
  const line = (phase: string) => {
    const now = Date.now();
    const due = options.expected().filter((e) => e.at <= now - 1000);
    const missing = due.filter((e) => !received.has(occurrenceKey(e.scheduleId, e.at))).length;
    const lags = recent.map((r) => r.receivedAt - r.scheduledAt);
    const stats = lagStats(lags);
    const seconds = everyMs / 1000;
    const early = recent.filter((r) => r.receivedAt < r.scheduledAt).length;
    console.log(
      `  [${label}] ${phase} t=${Math.round((now - window.from) / 1000)}s ` +
        `recv=${sink.count()} (${Math.round(lags.length / seconds)}/s) ` +
        `lag p50/p99=${stats ? `${fmt(stats.p50)}/${fmt(stats.p99)}` : '-'} ` +
        `due-not-received(>1s)=${missing} early=${early}` +
        (options.status ? ` ${options.status()}` : ''),
    );
    recent = [];
  };
  try {
    while (Date.now() < window.to + 1000) {
      await tick(everyMs, window.to + 1000);
      await options.onTick?.(Date.now() - started);
      line('run');
    }
    const drainStart = Date.now();
    const deadline = drainStart + options.drainMs;
    let lastLine = Date.now();
    for (;;) {
      const expected = options.expected();
      const missing = expected.filter(
        (e) => !received.has(occurrenceKey(e.scheduleId, e.at)),
      ).length;
      if (missing === 0 || Date.now() >= deadline) break;
      await new Promise((done) => setTimeout(done, 200));
      await options.onTick?.(Date.now() - started);
      if (Date.now() - lastLine >= everyMs) {
        line('drain');
        lastLine = Date.now();
      }
    }
    return { drainedMs: Date.now() - drainStart };
  } finally {
    unsubscribe();
  }
}

function tick(everyMs: number, notAfter: number): Promise<void> {
  const wait = Math.max(0, Math.min(everyMs, notAfter - Date.now()));
  return new Promise((done) => setTimeout(done, wait));
}

export function fmt(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${ms.toFixed(1)}ms`;
}
