import { queueOf, type RunJob, type RunToPublish } from './queue.constants';

/**
 * The jobs that carry `published`: runs of one queue and one start time share a job, in the
 * order given, at most `runsPerJob` to a job.
 */
export function groupRuns(
  published: ReadonlyArray<{ job: RunToPublish; startAfter?: Date }>,
  runsPerJob: number,
): Array<{ queue: string; startAfter?: Date; runs: RunJob[] }> {
  const open = new Map<string, { queue: string; startAfter?: Date; runs: RunJob[] }>();
  const jobs: Array<{ queue: string; startAfter?: Date; runs: RunJob[] }> = [];
  for (const { job, startAfter } of published) {
    const queue = queueOf(job.priority);
    const key = `${queue}@${startAfter?.getTime() ?? ''}`;
    let current = open.get(key);
    if (!current || current.runs.length >= runsPerJob) {
      current = { queue, ...(startAfter ? { startAfter } : {}), runs: [] };
      open.set(key, current);
      jobs.push(current);
    }
    current.runs.push({
      runId: job.runId,
      tenantId: job.tenantId,
      scheduledAt: job.scheduledAt.toISOString(),
      ...(job.targetId ? { targetId: job.targetId } : {}),
    });
  }
  return jobs;
}
