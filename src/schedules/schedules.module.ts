import { Module } from '@nestjs/common';
import { DueIndexModule } from '../due-index/due-index.module';
import { OccurrencesModule } from '../occurrences/occurrences.module';
import { TargetsModule } from '../targets/targets.module';
import { DispatchableSchedules } from './dispatchable-schedules';
import { SchedulesRepository } from './schedules.repository';
import { SchedulesService } from './schedules.service';

@Module({
  imports: [DueIndexModule, TargetsModule, OccurrencesModule],
  providers: [SchedulesRepository, SchedulesService, DispatchableSchedules],
  exports: [SchedulesService, DispatchableSchedules],
})
export class SchedulesModule {}
