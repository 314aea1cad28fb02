import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { OccurrencesModule } from '../occurrences';
import { SchedulesModule } from '../schedules';
import { BackfillsRepository } from './backfills.repository';
import { BackfillsService } from './backfills.service';

/** Backfills (record and duty module): past instants of a schedule run again, through admission. */
@Module({
  imports: [AdmissionModule, OccurrencesModule, SchedulesModule],
  providers: [BackfillsRepository, BackfillsService],
  exports: [BackfillsService],
})
export class BackfillsModule {}
