import type { RoleName } from '../config';
import type {
  AdmissionWait,
  AttemptOutcome,
  LeavingState,
  RunPriority,
  RunReason,
} from '../run-vocabulary';

/** The ids every event about one run carries, for logs and traces. */
export interface RunIds {
  tenantId: string;
  scheduleId: string;
  runId: string;
  attempt: number;
  fencingToken: number;
}

/**
 * What the engine reports as it works. Modules emit these; the subscriber turns them into
 * Prometheus series and log lines, so metrics are declared in one place and no module logs
 * the same fact twice. Labels are bounded vocabularies: never a tenant or run id.
 */
export type LifecycleEvent =
  | { kind: 'role.started' | 'role.stopped'; role: RoleName }
  | { kind: 'run.claimed'; run: RunIds; priority: RunPriority }
  /** A claim refused; `job` when the refused claim came from a consumed queue job. */
  | { kind: 'claim.refused'; tenantId: string; runId: string; reason: RunReason; job: boolean }
  | { kind: 'target.called'; result: 'response' | 'not_sent' | 'maybe_sent'; seconds: number }
  /** A RUNNING run left RUNNING under its fence: its holder's report, or a lease expiry. */
  | { kind: 'attempt.ended'; run: RunIds; outcome: AttemptOutcome; state: LeavingState }
  | { kind: 'completion.stale'; run: RunIds; currentFencingToken: number }
  | {
      kind: 'dispatch.committed';
      /** The instant due-ness was decided at (the database clock, or a prepared instant). */
      at: Date;
      created: ReadonlyArray<{ state: string; reason: RunReason | null; scheduledAt: Date }>;
      dropped: number;
    }
  | { kind: 'shards.held'; pollerId: string; owned: number; lost: readonly number[] }
  | { kind: 'clock.skew'; seconds: number }
  | { kind: 'due.oldest_age'; seconds: number }
  | { kind: 'outbox.repaired'; republished: number }
  /** Runs the poller handed to a worker beside it instead of leaving them to a fetch. */
  | { kind: 'runs.handed_off'; count: number }
  /** Handed-off runs a worker left to the queue (it was stopping, or found no room in time). */
  | { kind: 'handoff.released'; runs: number }
  /** Runs an admitter round took from the waiting lists. */
  | { kind: 'runs.admitted'; count: number }
  /** What waits for admission (reported about once a second). */
  | {
      kind: 'admission.waiting';
      runs: Partial<Record<AdmissionWait, number>>;
      oldestSeconds: number;
    }
  /** Runs SKIPPED because they could not start within their schedule's start deadline. */
  | { kind: 'runs.deadline_skipped'; count: number }
  /** Waiting runs ended FAILED target_gone because their target is disabled. */
  | { kind: 'runs.target_gone'; count: number }
  /** A target answered 429/503 with Retry-After: all its runs wait that long. */
  | { kind: 'target.backoff'; tenantId: string; targetId: string; seconds: number }
  /** A target answered 410 Gone and is disabled. */
  | { kind: 'target.disabled'; tenantId: string; targetId: string }
  | { kind: 'outbox.age'; seconds: number }
  /** A history maintenance round: partitions created, dropped, and expired ones kept (live runs). */
  | { kind: 'history.maintained'; created: number; dropped: number; waiting: number }
  /** A worker process of the primary's pool consumes jobs; `live`: how many do now. */
  | { kind: 'worker_process.ready'; pid: number; workerId: string; live: number }
  /** A worker process ended; `restartInMs` null when the pool is stopping (no restart). */
  | {
      kind: 'worker_process.exited';
      pid: number;
      code: number | null;
      signal: string | null;
      restartInMs: number | null;
      live: number;
    };
