/** pg-boss keeps its tables in a Postgres schema of its own, apart from ours. */
export const PGBOSS_SCHEMA = 'pgboss';

/**
 * The execution queue: one job per run that is ready to be attempted. A job carries ids only
 * (never payloads); workers claim the run in the ledger, so a job published twice is harmless.
 */
export const RUNS_QUEUE = 'dueline-runs';

export interface RunJob {
  runId: string;
  tenantId: string;
}
