/**
 * Shard ownership. A lease is (owner, epoch, expires_at) on one of the 128 shard rows; every
 * statement is conditional on the owner and the database clock, so two pollers can never both
 * believe they renewed the same lease. Ownership only spreads work: the unique occurrence insert,
 * not the lease, is what makes a paused poller's late write harmless.
 */

/** Announces this poller (and forgets pollers gone quiet) so each can size its fair share. */
export const ANNOUNCE_POLLER = `
  WITH gone AS (DELETE FROM poller_presence WHERE seen_until < now() - interval '1 minute')
  INSERT INTO poller_presence (poller_id, seen_until) VALUES ($1, now() + make_interval(secs => $2))
  ON CONFLICT (poller_id) DO UPDATE SET seen_until = EXCLUDED.seen_until`;

export const COUNT_LIVE_POLLERS = `SELECT count(*)::int AS n FROM poller_presence WHERE seen_until > now()`;

export const FORGET_POLLER = `DELETE FROM poller_presence WHERE poller_id = $1`;

/** Extends the leases this poller still holds; a lease that already expired is not revived. */
export const RENEW_LEASES = `
  UPDATE shard_leases SET expires_at = now() + make_interval(secs => $2)
   WHERE owner = $1 AND expires_at > now()
  RETURNING shard, epoch`;

/** Takes up to $3 expired or unowned shards; SKIP LOCKED keeps competing pollers from waiting. */
export const ACQUIRE_LEASES = `
  UPDATE shard_leases l
     SET owner = $1, epoch = l.epoch + 1, expires_at = now() + make_interval(secs => $2)
   WHERE l.shard IN (
     SELECT shard FROM shard_leases
      WHERE expires_at <= now()
      ORDER BY shard
      LIMIT $3
      FOR UPDATE SKIP LOCKED)
  RETURNING l.shard, l.epoch`;

/** Gives shards back at once (rebalancing, shutdown) instead of letting them expire. */
export const RELEASE_LEASES = `
  UPDATE shard_leases SET owner = NULL, expires_at = '-infinity'
   WHERE owner = $1 AND shard = ANY($2::smallint[])`;
