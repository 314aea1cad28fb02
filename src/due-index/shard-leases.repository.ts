import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../database';
import { SHARD_COUNT } from './shard';
import {
  ACQUIRE_LEASES,
  ANNOUNCE_POLLER,
  COUNT_LIVE_POLLERS,
  FORGET_POLLER,
  RELEASE_LEASES,
  RENEW_LEASES,
} from './shard-leases.sql';

export interface LeaseRound {
  /** Shards held after this round, ascending. */
  owned: number[];
  /** Shards this poller believed it held but whose lease had expired (taken or lapsed). */
  lost: number[];
  livePollers: number;
}

/**
 * One round of shard ownership for one poller: announce, renew, then converge on a fair share
 * (ceil(128 / live pollers)) by releasing extras or acquiring free shards. Run every fraction
 * of the lease period; a poller that joins, dies or pauses moves shards within one period.
 */
@Injectable()
export class ShardLeasesRepository {
  constructor(private readonly sql: SqlRunner) {}

  async round(
    pollerId: string,
    held: readonly number[],
    leaseSeconds: number,
  ): Promise<LeaseRound> {
    await this.sql.rows(ANNOUNCE_POLLER, [pollerId, leaseSeconds]);
    const [{ n }] = await this.sql.rows<{ n: number }>(COUNT_LIVE_POLLERS);
    const livePollers = Math.max(1, n);
    const renewed = await this.sql.rows<{ shard: number }>(RENEW_LEASES, [pollerId, leaseSeconds]);
    let owned = renewed.map((r) => r.shard).sort((a, b) => a - b);
    const lost = held.filter((shard) => !owned.includes(shard));
    const share = Math.ceil(SHARD_COUNT / livePollers);
    if (owned.length > share) {
      const extra = owned.slice(share);
      await this.sql.rows(RELEASE_LEASES, [pollerId, extra]);
      owned = owned.slice(0, share);
    } else if (owned.length < share) {
      const acquired = await this.sql.rows<{ shard: number }>(ACQUIRE_LEASES, [
        pollerId,
        leaseSeconds,
        share - owned.length,
      ]);
      owned = [...owned, ...acquired.map((r) => r.shard)].sort((a, b) => a - b);
    }
    return { owned, lost, livePollers };
  }

  async releaseAll(pollerId: string, held: readonly number[]): Promise<void> {
    await this.sql.rows(RELEASE_LEASES, [pollerId, held]);
    await this.sql.rows(FORGET_POLLER, [pollerId]);
  }
}
