import { getConstructionPlans } from 'pg-boss';
import { MIGRATIONS, migrationsWith } from '../migrations';
import { DispatchBudgetEntity, TargetDispatchBudgetEntity } from './admission';
import { AttemptEntity } from './attempts';
import { BackfillEntity, BackfillInstantEntity } from './backfills';
import { BulkOperationEntity, BulkOperationItemEntity } from './bulk-operations';
import { CalendarEntity } from './calendars';
import { runMigrations, type ForeignSchema, type MigrationResult } from './database';
import { EventEntity } from './events';
import { DueIndexEntity, PollerPresenceEntity, ShardLeaseEntity } from './due-index';
import {
  ScheduleLoadEntity,
  TenantLoadInstantEntity,
  TenantLoadProfileEntity,
} from './load-profile';
import { OccurrenceEntity } from './occurrences';
import { PGBOSS_SCHEMA } from './queue';
import { RunSummaryEntity, RunSummaryRangeEntity } from './run-summaries';
import {
  IdempotencyKeyEntity,
  ScheduleEntity,
  ScheduleRevisionEntity,
  TenantScheduleCountEntity,
} from './schedules';
import type { SecretKeyring } from './secrets';
import { SigningKeyEntity } from './signing-keys';
import { SubscriptionEntity } from './subscriptions';
import { TargetEntity } from './targets';
import { ApiKeyEntity, TenantEntity } from './tenants';

/**
 * The whole database schema, composed here at the root so that the database module knows no
 * record module: every TypeORM entity (for the data source, the migration generator and the
 * drift test), our reviewed migrations, and pg-boss's schema beside ours.
 */
export const SCHEMA = {
  entities: [
    TenantEntity,
    ApiKeyEntity,
    TargetEntity,
    CalendarEntity,
    ScheduleEntity,
    ScheduleRevisionEntity,
    IdempotencyKeyEntity,
    TenantScheduleCountEntity,
    DueIndexEntity,
    ShardLeaseEntity,
    PollerPresenceEntity,
    OccurrenceEntity,
    AttemptEntity,
    DispatchBudgetEntity,
    TargetDispatchBudgetEntity,
    TenantLoadProfileEntity,
    TenantLoadInstantEntity,
    ScheduleLoadEntity,
    BulkOperationEntity,
    BulkOperationItemEntity,
    BackfillEntity,
    BackfillInstantEntity,
    SigningKeyEntity,
    RunSummaryEntity,
    RunSummaryRangeEntity,
    SubscriptionEntity,
    EventEntity,
  ],
  migrations: MIGRATIONS,
};

const PGBOSS: ForeignSchema = {
  name: 'pg-boss',
  installedWhen: `${PGBOSS_SCHEMA}.version`,
  construction: () => getConstructionPlans(PGBOSS_SCHEMA),
};

/**
 * Our migrations, then pg-boss's schema when it is absent, under one advisory lock. The
 * keyring is what data migrations seal plain-text secrets under (none needed on an empty
 * database).
 */
export function migrateDatabase(
  url: string,
  keyring: SecretKeyring | null = null,
): Promise<MigrationResult> {
  return runMigrations(url, { ...SCHEMA, migrations: migrationsWith(keyring) }, [PGBOSS]);
}
