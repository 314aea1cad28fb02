import type { RunFilter } from '../occurrences';

export const BULK_KINDS = ['replay', 'cancel'] as const;
export type BulkKind = (typeof BULK_KINDS)[number];

export const BULK_STATUSES = ['running', 'completed'] as const;
export type BulkStatus = (typeof BULK_STATUSES)[number];

/** What became of one selected run. */
export const BULK_OUTCOMES = {
  replayed: 'replay: a new run was created, linked to the original and with its idempotency key',
  already_replayed: 'replay: the run was replayed before (one replay per run; replay the replay)',
  not_replayable: 'replay: only FAILED and UNKNOWN runs are replayed',
  schedule_cancelled: 'replay: the schedule is cancelled; it can no longer run',
  cancelled: 'cancel: the run was waiting and is now CANCELLED',
  cancel_requested: 'cancel: an attempt was running; it stops at its next heartbeat',
  already_final: 'cancel: the run had already ended',
} as const;
export type BulkOutcome = keyof typeof BULK_OUTCOMES;
export const BULK_OUTCOME_CODES = Object.keys(BULK_OUTCOMES) as BulkOutcome[];

/** Outcomes that did what was asked (the rest are skipped, each with why). */
export const DONE_OUTCOMES: readonly BulkOutcome[] = ['replayed', 'cancelled', 'cancel_requested'];

/** At most this many runs per bulk operation (the selection is fixed when it is created). */
export const MAX_BULK_RUNS = 1000;
export const DEFAULT_BULK_RUNS = 100;

export interface BulkRequest {
  kind: BulkKind;
  /** The runs: matching this filter (or these ids, in `filter.ids`), oldest first. */
  filter: RunFilter;
  limit: number;
  /** The public id of the API key that asked. */
  apiKeyId: string;
}

export interface BulkOperation {
  id: string;
  tenantId: string;
  kind: BulkKind;
  status: BulkStatus;
  /** Runs selected when the operation was created. */
  total: number;
  processed: number;
  succeeded: number;
  skipped: number;
  requestedByApiKeyId: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface BulkItem {
  runId: string;
  outcome: BulkOutcome | null;
  /** For a replay, the new run. */
  resultRunId: string | null;
}

export interface BulkItemPage {
  items: BulkItem[];
  nextAfterId: string | null;
}
