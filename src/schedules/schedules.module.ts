import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { DueIndexModule } from '../due-index';
import { OccurrencesModule } from '../occurrences';
import { TargetsModule } from '../targets';
import { SchedulesRepository } from './schedules.repository';
import { SchedulesService } from './schedules.service';

/**
 * Schedules (record module): definitions with their revisions, Idempotency-Keys, the due-index
 * entry written with every change, and manual runs.
 */
@Module({
  imports: [AdmissionModule, DueIndexModule, TargetsModule, OccurrencesModule],
  providers: [SchedulesRepository, SchedulesService],
  exports: [SchedulesService],
})
export class SchedulesModule {}
