export {
  BACKFILL_LIMITS,
  BACKFILL_ORDERS,
  BACKFILL_STATUSES,
  INSTANT_ACTION_CODES,
  INSTANT_ACTIONS,
  REPROCESS_MODES,
  type Backfill,
  type BackfillOrder,
  type BackfillRequest,
  type PlannedInstant,
  type ReprocessMode,
} from './backfill';
export { BackfillEntity, BackfillInstantEntity } from './backfill.entity';
export { BackfillsModule } from './backfills.module';
export { BackfillsService, type BackfillCreated } from './backfills.service';
