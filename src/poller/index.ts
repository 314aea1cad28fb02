export {
  MAX_INSTANTS_PER_ENTRY,
  MAX_SKIPPED_ROWS,
  planDispatch,
  SKIP_GRACE_MS,
  type DispatchPlan,
  type PlannedOccurrence,
} from './dispatch-plan';
export { DueDispatcher, type DispatchOptions, type DispatchResult } from './due-dispatcher';
export { PollerModule } from './poller.module';
export { PollerService } from './poller.service';
