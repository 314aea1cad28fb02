import { Module } from '@nestjs/common';
import { HistoryPartitionsRepository } from './history-partitions.repository';
import { RunSummariser, RunSummariesModule } from '../run-summaries';
import { HISTORY_SUMMARISER } from './history-summariser';
import { HistoryService } from './history.service';

/**
 * The run history's time-range partitions (duty module): created ahead, dropped after the
 * retention. The relay runs it (relay/history-maintenance-loop.ts). What outlives a dropped
 * partition is kept by the run summaries, in the dropping transaction.
 */
@Module({
  imports: [RunSummariesModule],
  providers: [
    HistoryPartitionsRepository,
    HistoryService,
    { provide: HISTORY_SUMMARISER, useExisting: RunSummariser },
  ],
  exports: [HistoryService],
})
export class HistoryModule {}
