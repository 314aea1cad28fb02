export { OccurrenceEntity } from './occurrence.entity';
export {
  RUN_TRIGGERS,
  type InsertedOccurrence,
  type NewOccurrence,
  type RunFilter,
  type RunTrigger,
} from './occurrence';
export { OccurrencesModule } from './occurrences.module';
export { OccurrencesService } from './occurrences.service';
export type { CancelResult, Run, RunPage, RunWithAttempts } from './run';
