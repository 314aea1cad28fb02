import { Module } from '@nestjs/common';
import { DueIndexModule } from '../due-index/due-index.module';
import { OccurrencesModule } from '../occurrences/occurrences.module';
import { SchedulesModule } from '../schedules/schedules.module';
import { DueDispatcher } from './due-dispatcher';
import { PollerMetrics } from './poller-metrics';
import { PollerService } from './poller.service';

/** The poller role: due-time discovery and durable dispatch. */
@Module({
  imports: [DueIndexModule, SchedulesModule, OccurrencesModule],
  providers: [PollerService, DueDispatcher, PollerMetrics],
  exports: [PollerService, DueDispatcher],
})
export class PollerModule {}
