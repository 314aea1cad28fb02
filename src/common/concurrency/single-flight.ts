/**
 * Concurrent lookups of one key share one call: a caller that asks while a lookup of its key is
 * in flight gets that lookup's answer (or its failure) instead of starting another. Nothing is
 * kept once the call settles, so this shares reads and never caches them: a caller's answer
 * comes from a call that was in flight when it asked.
 */
export class SingleFlight<K, V> {
  private readonly pending = new Map<K, Promise<V>>();

  /** Lookups in flight (for tests and metrics). */
  get size(): number {
    return this.pending.size;
  }

  run(key: K, lookup: () => Promise<V>): Promise<V> {
    const inFlight = this.pending.get(key);
    if (inFlight) return inFlight;
    const call = lookup().finally(() => this.pending.delete(key));
    this.pending.set(key, call);
    return call;
  }
}
