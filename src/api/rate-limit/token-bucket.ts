/**
 * Per-key token buckets: `ratePerSecond` refill, `burst` capacity. Decides in O(1) per call and
 * keeps at most `maxKeys` buckets (least recently used are dropped), so memory stays bounded.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one token; returns 0 when allowed, else the seconds until one is available. */
  take(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key) ?? { tokens: this.burst, at: nowMs };
    this.buckets.delete(key);
    bucket.tokens = Math.min(
      this.burst,
      bucket.tokens + ((nowMs - bucket.at) / 1000) * this.ratePerSecond,
    );
    bucket.at = nowMs;
    let waitSeconds = 0;
    if (bucket.tokens >= 1) bucket.tokens -= 1;
    else waitSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
    this.buckets.set(key, bucket);
    if (this.buckets.size > this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
    return waitSeconds;
  }
}
