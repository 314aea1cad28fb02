import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AdmissionModule } from '../admission';
import { BackfillsModule } from '../backfills';
import { BulkOperationsModule } from '../bulk-operations';
import { CalendarsModule } from '../calendars';
import { ExecutionModule } from '../execution';
import { OccurrencesModule } from '../occurrences';
import { RunSummariesModule } from '../run-summaries';
import { SchedulesModule } from '../schedules';
import { SigningKeysModule } from '../signing-keys';
import { SubscriptionsModule } from '../subscriptions';
import { TargetsModule } from '../targets';
import { TenantsModule } from '../tenants';
import { UsageModule } from '../usage';
import { AuthGuard } from './auth/auth.guard';
import { BackfillsController } from './backfills/backfills.controller';
import { CalendarsController } from './calendars/calendars.controller';
import { JwksController } from './jwks/jwks.controller';
import { TenantRateLimitGuard } from './rate-limit/tenant-rate-limit.guard';
import { RunSearchController } from './runs/run-search.controller';
import { RunsController } from './runs/runs.controller';
import { ScheduleRunsController } from './runs/schedule-runs.controller';
import { ScheduleSummaryController } from './schedules/schedule-summary.controller';
import { SchedulesController } from './schedules/schedules.controller';
import { SubscriptionsController } from './subscriptions/subscriptions.controller';
import { TargetsController } from './targets/targets.controller';
import { TenantsController } from './tenants/tenants.controller';
import { UsageController } from './usage/usage.controller';

/**
 * The api role: the management HTTP API and the worker contract. Controllers translate; the
 * record and duty modules decide.
 */
@Module({
  imports: [
    TenantsModule,
    CalendarsModule,
    BulkOperationsModule,
    BackfillsModule,
    SchedulesModule,
    TargetsModule,
    OccurrencesModule,
    AdmissionModule,
    ExecutionModule,
    UsageModule,
    SigningKeysModule,
    RunSummariesModule,
    SubscriptionsModule,
  ],
  controllers: [
    TenantsController,
    SchedulesController,
    CalendarsController,
    BackfillsController,
    TargetsController,
    SubscriptionsController,
    ScheduleRunsController,
    ScheduleSummaryController,
    RunSearchController,
    RunsController,
    UsageController,
    JwksController,
  ],
  providers: [
    // Order matters: the tenant is resolved before it is rate limited.
    { provide: APP_GUARD, useClass: AuthGuard },
    { provide: APP_GUARD, useClass: TenantRateLimitGuard },
  ],
})
export class ApiModule {}
