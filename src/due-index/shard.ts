import { createHash } from 'node:crypto';

/** The due-time index is split into this many logical shards, owned by pollers through leases. */
export const SHARD_COUNT = 128;

/**
 * A stable hash of the schedule id: the same on every replica and across versions (Postgres's
 * hashtext() makes no such promise), so a schedule's shard never moves.
 */
export function shardOf(scheduleId: string): number {
  return createHash('sha256').update(scheduleId).digest().readUInt32BE(0) % SHARD_COUNT;
}
