/** A partition's range of scheduled_at: [from, to). */
export interface PartitionRange {
  from: Date;
  to: Date;
}

export interface PartitionPlanInput {
  /** The existing range partitions, oldest first (they never overlap). */
  existing: readonly PartitionRange[];
  /** The database clock. */
  now: Date;
  widthMinutes: number;
  ahead: number;
  /** The oldest run the DEFAULT partition holds below the oldest range (null: none). */
  oldestDefaultBelow: Date | null;
}

const MINUTE_MS = 60_000;

/** `at` rounded down to a multiple of the width since the epoch (UTC days for 1440). */
export function alignDown(at: Date, widthMinutes: number): Date {
  const width = widthMinutes * MINUTE_MS;
  return new Date(Math.floor(at.getTime() / width) * width);
}

/**
 * The partitions to create so that the current window and `ahead` more exist, oldest first.
 * New ranges continue from the last upper bound, whatever width made it, so a width change
 * between restarts never overlaps or leaves a hole; a gap left by a stopped service (the last
 * bound is behind the current window) becomes one partition, so the history stays contiguous
 * and at most `ahead + 3` partitions are created in one round. Runs that the DEFAULT partition
 * holds below the oldest range (a backfill of old instants) get one partition reaching down to
 * them, so retention can drop them too. Pure; the repository creates what this plans.
 */
export function planPartitions(input: PartitionPlanInput): PartitionRange[] {
  const width = input.widthMinutes * MINUTE_MS;
  const current = alignDown(input.now, input.widthMinutes);
  const horizon = current.getTime() + (input.ahead + 1) * width;
  const planned: PartitionRange[] = [];
  const last = input.existing.at(-1);
  let cursor = last ? last.to.getTime() : current.getTime();
  if (cursor < current.getTime()) {
    planned.push({ from: new Date(cursor), to: current });
    cursor = current.getTime();
  }
  while (cursor < horizon) {
    planned.push({ from: new Date(cursor), to: new Date(cursor + width) });
    cursor += width;
  }
  const lowest = input.existing[0]?.from ?? planned[0]?.from;
  if (lowest && input.oldestDefaultBelow && input.oldestDefaultBelow < lowest) {
    planned.unshift({ from: alignDown(input.oldestDefaultBelow, input.widthMinutes), to: lowest });
  }
  return planned;
}

/** The partitions whose whole range is older than the retention, oldest first. */
export function expiredPartitions<T extends PartitionRange>(
  existing: readonly T[],
  now: Date,
  retentionMinutes: number,
): T[] {
  const cutoff = now.getTime() - retentionMinutes * MINUTE_MS;
  return existing.filter((p) => p.to.getTime() <= cutoff);
}
