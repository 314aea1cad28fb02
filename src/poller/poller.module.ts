import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { DueIndexModule } from '../due-index';
import { HandoffModule } from '../handoff';
import { OccurrencesModule } from '../occurrences';
import { OverlapModule } from '../overlap';
import { SchedulesModule } from '../schedules';
import { DatabaseClockRepository } from './database-clock.repository';
import { DueDispatcher } from './due-dispatcher';
import { PollerService } from './poller.service';

/**
 * The poller role and its engine: holds shards of the due-time index by lease and turns due
 * entries into occurrences and queue jobs, one transaction per batch (DueDispatcher, planned by
 * dispatch-plan).
 */
@Module({
  imports: [
    AdmissionModule,
    DueIndexModule,
    HandoffModule,
    SchedulesModule,
    OccurrencesModule,
    OverlapModule,
  ],
  providers: [PollerService, DueDispatcher, DatabaseClockRepository],
  exports: [PollerService, DueDispatcher],
})
export class PollerModule {}
