import { Module } from '@nestjs/common';
import { SchedulesModule } from '../schedules';
import { RunSummariser } from './run-summariser';
import { RunSummariesRepository } from './run-summaries.repository';
import { RunSummariesService } from './run-summaries.service';

/**
 * Run summaries (record module): what outlives the rows of runs and attempts once their
 * retention has passed, per schedule, UTC day and (state, reason), and the ledger of the ranges
 * summarised. RunSummariser writes them (called by the partition maintenance);
 * RunSummariesService reads them with the rows still kept.
 */
@Module({
  imports: [SchedulesModule],
  providers: [RunSummariesRepository, RunSummariser, RunSummariesService],
  exports: [RunSummariser, RunSummariesService],
})
export class RunSummariesModule {}
