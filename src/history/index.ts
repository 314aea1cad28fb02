export { HistoryModule } from './history.module';
export {
  DEFAULT_HISTORY_RETENTION_DAYS,
  HistoryService,
  type MaintenanceResult,
} from './history.service';
export { HISTORY_SUMMARISER, type HistorySummariser } from './history-summariser';
export {
  alignDown,
  expiredPartitions,
  planPartitions,
  type PartitionRange,
} from './partition-plan';
