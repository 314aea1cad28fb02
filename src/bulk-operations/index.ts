export {
  BULK_KINDS,
  BULK_OUTCOME_CODES,
  BULK_OUTCOMES,
  BULK_STATUSES,
  DEFAULT_BULK_RUNS,
  MAX_BULK_RUNS,
  type BulkItem,
  type BulkItemPage,
  type BulkKind,
  type BulkOperation,
  type BulkOutcome,
} from './bulk-operation';
export { BulkOperationEntity, BulkOperationItemEntity } from './bulk-operation.entity';
export { BulkOperationsModule } from './bulk-operations.module';
export { BulkOperationsService } from './bulk-operations.service';
export { REPLAYABLE_STATES } from './run-replay';
