export {
  LAG_BUCKET_COUNT,
  LAG_BUCKETS_PER_DOUBLING,
  bucketValueMs,
  histogramPercentileMs,
} from './lag-histogram';
export { RunSummariesModule } from './run-summaries.module';
export { RunSummariesService } from './run-summaries.service';
export { RunSummariser } from './run-summariser';
export { RunSummaryEntity } from './run-summary.entity';
export { RunSummaryRangeEntity } from './run-summary-range.entity';
export {
  DEFAULT_SUMMARY_DAYS,
  MAX_SUMMARY_DAYS,
  type DaySummary,
  type LagSummary,
  type OutcomeSummary,
  type ScheduleSummary,
} from './run-summary';
