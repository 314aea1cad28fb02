import type { EndReason, RunReason, RunState } from '../run-vocabulary';

/** A run as one holder's claim left it: the fence its writes must carry. */
export interface RunFence {
  runId: string;
  tenantId: string;
  fencingToken: number;
  /**
   * The run's scheduled_at, when the caller knows it (the built-in worker does, from its claim):
   * confines the statements to the run's history partition. Without it every partition is
   * searched (the HTTP worker contract names runs by id alone).
   */
  scheduledAt?: Date;
}

export type HeartbeatResult =
  | { held: true; leaseUntil: Date; cancelRequested: boolean }
  /** The fence moved on or the run left RUNNING: the caller no longer holds it. */
  | { held: false };

/**
 * How an attempt ended, as the holder reports it. `retryable` is a failure that may be repeated
 * (the target did not act, or it deduplicates); `cancelled` means the holder stopped because
 * cancellation was requested.
 */
export interface AttemptReport {
  outcome: 'succeeded' | 'retryable' | 'failed' | 'unknown' | 'cancelled';
  /** What happened, in the tenant's terms; stored on the attempt and, when final, the run. */
  error: string | null;
  /** The target may have acted on this attempt even though it did not confirm. */
  mayHaveActed: boolean;
  /** For `failed`: why, when it is not the target's answer (`target_rejected`). */
  failure?: Extract<EndReason, 'target_rejected' | 'target_missing' | 'target_gone'>;
  httpStatus?: number | null;
  durationMs?: number | null;
  /** A server-sent Retry-After, already capped. */
  retryAfterMs?: number | null;
  /** The target asked (429/503 with Retry-After) that all its runs wait this long. */
  targetBackoffMs?: number | null;
  /** What the target answered beside its status: allow-listed headers, the start of the body. */
  response?: { headers: Record<string, string>; bodyExcerpt: string } | null;
  /** The trace id of the attempt's target call (tracing on). */
  traceId?: string | null;
}

/** An attempt's report under the fence its holder claimed with. */
export interface Completion extends RunFence {
  report: AttemptReport;
}

export type CompletionResult =
  | {
      accepted: true;
      state: RunState;
      reason: RunReason | null;
      reasonDetail: string | null;
      nextAttemptAt: Date | null;
      retryInMs: number | null;
    }
  /** The fence moved on: the report was rejected and noted on its attempt. */
  | { accepted: false; state: RunState | null };
