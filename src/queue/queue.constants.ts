import type { RunPriority } from '../run-vocabulary';

/** pg-boss keeps its tables in a Postgres schema of its own, apart from ours. */
export const PGBOSS_SCHEMA = 'pgboss';

/**
 * The execution queue: a job per batch of runs that are ready to be attempted (RunsJob, at most
 * QUEUE_RUNS_PER_JOB runs). A job carries ids only (never payloads); workers claim each run in
 * the ledger, so a job published twice is harmless.
 */
export const RUNS_QUEUE = 'dueline-runs';

/**
 * The same for runs of priority `high`: a queue of their own, so the workers' reserved slots
 * (WORKER_RESERVED_HIGH_SHARE) can take them however long the other queue is.
 */
export const HIGH_RUNS_QUEUE = 'dueline-runs-high';

/** Both queues, for what reads them all (the relay's repair). */
export const RUN_QUEUES = [HIGH_RUNS_QUEUE, RUNS_QUEUE] as const;

/** One run of a job. */
export interface RunJob {
  runId: string;
  tenantId: string;
  /**
   * The run's scheduled_at (ISO 8601), its history partition's key: the claim looks the run up
   * in that partition only. Absent on jobs published before runs were partitioned (the claim
   * then looks in every partition).
   */
  scheduledAt?: string;
  /**
   * The run's target when its job was published, a hint: the worker reads that target beside
   * the claim instead of after it. The claim's answer decides which target is called (a schedule
   * moved to another target since is read then). Absent: read after the claim.
   */
  targetId?: string;
}

/**
 * A job's data: runs published together, each claimed on its own. A job of one run needs no
 * more statements than a job per run did, and a batch of runs costs one row of pgboss.job (its
 * insert, fetch and delete) instead of one each.
 */
export interface RunsJob {
  runs: RunJob[];
}

/**
 * The runs a job carries. A job published before jobs carried batches (one run, its fields at
 * the top) is read as a batch of one.
 */
export function runsOf(data: RunsJob | RunJob): RunJob[] {
  return 'runs' in data && Array.isArray(data.runs) ? data.runs : [data as RunJob];
}

/** A run to publish, and which queue it goes to. Absent priority: normal. */
export interface RunToPublish {
  runId: string;
  tenantId: string;
  scheduledAt: Date;
  priority?: RunPriority;
  /** Its target, as far as the publisher knows (see RunJob.targetId). */
  targetId?: string;
}

/**
 * A job handed to a worker beside its publisher (see handoff/): written like any run job but held
 * back from fetches for a grace period, its id known to the publisher so the worker that takes it
 * can delete it once its runs are claimed.
 */
export interface HandedOffJob {
  queue: string;
  id: string;
  runs: RunJob[];
}

export function queueOf(priority: RunPriority | undefined): string {
  return priority === 'high' ? HIGH_RUNS_QUEUE : RUNS_QUEUE;
}
