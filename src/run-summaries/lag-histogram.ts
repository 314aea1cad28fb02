/**
 * The mergeable form of a set of due-to-start lags (ms). Bucket 0 holds lags under 1 ms; bucket
 * i >= 1 holds [2^((i-1)/8), 2^(i/8)) ms, eight buckets per doubling, up to bucket 256 (2^32 ms,
 * about 50 days) which also takes anything longer. The bucket of a lag is computed in SQL
 * (LAG_BUCKET in run-summaries.sql.ts) so every path buckets alike; a percentile read from a
 * histogram is its bucket's geometric middle, within 2^(1/16) - 1 (about 4.4 %) of the exact
 * value, and never above the exact maximum, which is kept beside it.
 */
export const LAG_BUCKETS_PER_DOUBLING = 8;
export const LAG_BUCKET_COUNT = 1 + LAG_BUCKETS_PER_DOUBLING * 32;

/** Sparse: bucket number to count. */
export type LagHistogram = ReadonlyMap<number, number>;

export function histogramOf(buckets: readonly number[], counts: readonly number[]): LagHistogram {
  const histogram = new Map<number, number>();
  buckets.forEach((bucket, i) => histogram.set(bucket, (histogram.get(bucket) ?? 0) + counts[i]));
  return histogram;
}

export function mergeHistograms(histograms: readonly LagHistogram[]): LagHistogram {
  const merged = new Map<number, number>();
  for (const histogram of histograms) {
    for (const [bucket, count] of histogram) merged.set(bucket, (merged.get(bucket) ?? 0) + count);
  }
  return merged;
}

/** The value that stands for a bucket: its geometric middle (0 for the sub-millisecond one). */
export function bucketValueMs(bucket: number): number {
  if (bucket <= 0) return 0;
  return Math.round(2 ** ((bucket - 0.5) / LAG_BUCKETS_PER_DOUBLING));
}

/**
 * The p-quantile the way percentile_disc reads it (the first lag whose rank reaches
 * ceil(p * n)), from the histogram: the value of the bucket that rank falls in, capped at the
 * exact maximum. Null for an empty histogram.
 */
export function histogramPercentileMs(
  histogram: LagHistogram,
  p: number,
  maxMs: number,
): number | null {
  const total = [...histogram.values()].reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket) ?? 0;
    if (seen >= rank) return Math.min(bucketValueMs(bucket), maxMs);
  }
  return maxMs;
}
