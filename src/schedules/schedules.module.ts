import { Module } from '@nestjs/common';
import { DueIndexModule } from '../due-index/due-index.module';
import { TargetsModule } from '../targets/targets.module';
import { SchedulesRepository } from './schedules.repository';
import { SchedulesService } from './schedules.service';

@Module({
  imports: [DueIndexModule, TargetsModule],
  providers: [SchedulesRepository, SchedulesService],
  exports: [SchedulesService],
})
export class SchedulesModule {}
