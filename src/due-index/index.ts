export { DueIndexEntity } from './due-index.entity';
export { DueIndexModule } from './due-index.module';
export {
  DueIndexRepository,
  type ClaimedDueBatch,
  type ClaimedDueEntry,
  type CrowdedInstant,
  type CrowdedInstantLook,
  type DueEntry,
} from './due-index.repository';
export { DueListener, DueNotificationsRepository } from './due-notifications.repository';
export { DUE_CHANNEL } from './due-index.sql';
export { PollerPresenceEntity } from './poller-presence.entity';
export { ShardLeaseEntity } from './shard-lease.entity';
export { ShardLeasesRepository, type LeaseRound } from './shard-leases.repository';
export { SHARD_COUNT, shardOf } from './shard';
export { POLLER_MAX_SLEEP_MS, WAKE_HORIZON_MS } from './wake-up';
