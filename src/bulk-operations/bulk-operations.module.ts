import { Module } from '@nestjs/common';
import { AdmissionModule } from '../admission';
import { OccurrencesModule } from '../occurrences';
import { SchedulesModule } from '../schedules';
import { BulkOperationsRepository } from './bulk-operations.repository';
import { BulkOperationsService } from './bulk-operations.service';

/** Bulk operations (record and duty module): bulk replay and cancel of runs, with progress. */
@Module({
  imports: [AdmissionModule, OccurrencesModule, SchedulesModule],
  providers: [BulkOperationsRepository, BulkOperationsService],
  exports: [BulkOperationsService],
})
export class BulkOperationsModule {}
