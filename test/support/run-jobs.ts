/**
 * SQL for tests that look into the execution queue: a job of pgboss.job carries a batch of runs
 * (`data.runs`, see RunsJob), so "the job of run X" is the job whose batch names X.
 */

/** Whether the job (`job`, a row of pgboss.job) carries the run whose id is the SQL `runId`. */
export function carriesRun(runId: string, job = 'pgboss.job'): string {
  return `${job}.data->'runs' @> jsonb_build_array(jsonb_build_object('runId', (${runId})::text))`;
}

/** Whether the job carries any of the runs whose ids are the SQL text array `runIds`. */
export function carriesAnyRun(runIds: string, job = 'pgboss.job'): string {
  return `EXISTS (SELECT 1 FROM jsonb_array_elements(${job}.data->'runs') AS carried(run)
                   WHERE carried.run->>'runId' = ANY(${runIds}))`;
}
