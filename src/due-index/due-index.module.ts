import { Module } from '@nestjs/common';
import { DueIndexRepository } from './due-index.repository';
import { DueNotificationsRepository } from './due-notifications.repository';
import { ShardLeasesRepository } from './shard-leases.repository';

/**
 * The due-time index (record module): entries written in the transaction that changes their
 * schedule, read by the poller in its dispatch transaction; shard leases and poller presence.
 * Its repositories are its public face: every statement joins a caller's transaction.
 */
@Module({
  providers: [DueIndexRepository, ShardLeasesRepository, DueNotificationsRepository],
  exports: [DueIndexRepository, ShardLeasesRepository, DueNotificationsRepository],
})
export class DueIndexModule {}
