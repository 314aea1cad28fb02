import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { CalendarsModule } from '../calendars';
import { DueIndexModule } from '../due-index';
import { EventsModule } from '../events';
import { LoadProfileModule } from '../load-profile';
import { OccurrencesModule } from '../occurrences';
import { TargetsModule } from '../targets';
import { ScheduleCreator } from './schedule-creator';
import { ScheduleQuotaRepository } from './schedule-quota.repository';
import { ScheduleRevisionsRepository } from './schedule-revisions.repository';
import { SchedulesRepository } from './schedules.repository';
import { SchedulesService } from './schedules.service';

/**
 * Schedules (record module): definitions with their revisions, Idempotency-Keys, the due-index
 * entry written with every change, the per-tenant count of live schedules behind the
 * maxActiveSchedules quota, what each adds to its tenant's projected load, and manual runs.
 */
@Module({
  imports: [
    AdmissionModule,
    CalendarsModule,
    DueIndexModule,
    EventsModule,
    LoadProfileModule,
    TargetsModule,
    OccurrencesModule,
  ],
  providers: [
    SchedulesRepository,
    ScheduleQuotaRepository,
    ScheduleRevisionsRepository,
    ScheduleCreator,
    SchedulesService,
  ],
  exports: [SchedulesService],
})
export class SchedulesModule {}
