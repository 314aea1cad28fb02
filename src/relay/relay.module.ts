import { Module } from '@nestjs/common';
import { OccurrencesModule } from '../occurrences/occurrences.module';
import { SchedulesModule } from '../schedules/schedules.module';
import { LeaseSweeper } from './lease-sweeper';
import { RelayService } from './relay.service';

@Module({
  imports: [OccurrencesModule, SchedulesModule],
  providers: [RelayService, LeaseSweeper],
  exports: [RelayService],
})
export class RelayModule {}
