export { CRON_MACROS, parseCron, type ParsedCron } from './cron-expression';
export { isLocalDate } from './excluded-dates';
export { InvalidCronError, InvalidTimezoneError } from './errors';
export {
  minimumGapSeconds,
  minimumIntervalSeconds,
  nextOccurrence,
  nextOccurrences,
  occurrencesBetween,
  SEARCH_HORIZON_YEARS,
} from './recurrence';
export { isValidTimezone, toLocalIso, zoneOffsetFn } from './timezone';
export {
  DEFAULT_DST_POLICY,
  type DstPolicy,
  type NonexistentPolicy,
  type Occurrence,
  type OccurrenceWindow,
  type RecurrenceSpec,
  type RepeatedPolicy,
} from './types';
