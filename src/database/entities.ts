import { AttemptEntity } from '../attempts/attempt.entity';
import { DueIndexEntity } from '../due-index/due-index.entity';
import { PollerPresenceEntity } from '../due-index/poller-presence.entity';
import { ShardLeaseEntity } from '../due-index/shard-lease.entity';
import { OccurrenceEntity } from '../occurrences/occurrence.entity';
import { IdempotencyKeyEntity } from '../schedules/idempotency-key.entity';
import { ScheduleEntity } from '../schedules/schedule.entity';
import { TargetEntity } from '../targets/target.entity';
import { ApiKeyEntity } from '../tenants/api-key.entity';
import { DispatchBudgetEntity } from '../tenants/dispatch-budget.entity';
import { TenantEntity } from '../tenants/tenant.entity';

/** Every TypeORM entity, for the data source, the migration generator and the drift test. */
export const ENTITIES = [
  TenantEntity,
  ApiKeyEntity,
  TargetEntity,
  ScheduleEntity,
  IdempotencyKeyEntity,
  DueIndexEntity,
  ShardLeaseEntity,
  PollerPresenceEntity,
  OccurrenceEntity,
  AttemptEntity,
  DispatchBudgetEntity,
];
