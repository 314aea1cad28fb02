import { Module } from '@nestjs/common';
import { HistoryPartitionsRepository } from './history-partitions.repository';
import { HISTORY_SUMMARISER, NoopHistorySummariser } from './history-summariser';
import { HistoryService } from './history.service';

/**
 * The run history's time-range partitions (duty module): created ahead, dropped after the
 * retention. The relay runs it (relay/history-maintenance-loop.ts). The summariser that keeps
 * what outlives a dropped partition is a no-op here until the summaries' module provides
 * HISTORY_SUMMARISER.
 */
@Module({
  providers: [
    HistoryPartitionsRepository,
    HistoryService,
    { provide: HISTORY_SUMMARISER, useClass: NoopHistorySummariser },
  ],
  exports: [HistoryService],
})
export class HistoryModule {}
