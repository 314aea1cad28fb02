import { groupRuns } from '../../../src/queue/run-job-batches';
import { HIGH_RUNS_QUEUE, runsOf, RUNS_QUEUE, type RunToPublish } from '../../../src/queue';

const at = new Date('2026-12-05T10:00:00.000Z');
const run = (n: number, extra: Partial<RunToPublish> = {}): RunToPublish => ({
  runId: `run-${n}`,
  tenantId: `tenant-${n % 3}`,
  scheduledAt: at,
  ...extra,
});

describe('groupRuns: the jobs that carry a batch of published runs', () => {
  it('puts runs of one queue and one start time in jobs of at most runsPerJob, in order', () => {
    const runs = Array.from({ length: 45 }, (_, n) => ({ job: run(n) }));
    const jobs = groupRuns(runs, 20);
    expect(jobs.map((job) => job.runs.length)).toEqual([20, 20, 5]);
    expect(jobs.every((job) => job.queue === RUNS_QUEUE && job.startAfter === undefined)).toBe(
      true,
    );
    expect(jobs.flatMap((job) => job.runs.map((r) => r.runId))).toEqual(
      runs.map(({ job }) => job.runId),
    );
  });

  it('never mixes queues or start times in one job', () => {
    const later = new Date(at.getTime() + 1500);
    const jobs = groupRuns(
      [
        { job: run(1) },
        { job: run(2, { priority: 'high' }) },
        { job: run(3), startAfter: later },
        { job: run(4, { priority: 'low' }) },
        { job: run(5), startAfter: later },
        { job: run(6, { priority: 'high' }) },
      ],
      20,
    );
    expect(
      jobs.map((job) => ({
        queue: job.queue,
        startAfter: job.startAfter?.getTime(),
        runs: job.runs.map((r) => r.runId),
      })),
    ).toEqual([
      { queue: RUNS_QUEUE, startAfter: undefined, runs: ['run-1', 'run-4'] },
      { queue: HIGH_RUNS_QUEUE, startAfter: undefined, runs: ['run-2', 'run-6'] },
      { queue: RUNS_QUEUE, startAfter: later.getTime(), runs: ['run-3', 'run-5'] },
    ]);
  });

  it('carries ids, the partition key and the target hint, never more', () => {
    const [job] = groupRuns([{ job: run(7, { targetId: 'target-1' }) }, { job: run(8) }], 20);
    expect(job.runs).toEqual([
      { runId: 'run-7', tenantId: 'tenant-1', scheduledAt: at.toISOString(), targetId: 'target-1' },
      { runId: 'run-8', tenantId: 'tenant-2', scheduledAt: at.toISOString() },
    ]);
  });

  it('one run a job when runsPerJob is 1', () => {
    expect(groupRuns([{ job: run(1) }, { job: run(2) }], 1).map((job) => job.runs.length)).toEqual([
      1, 1,
    ]);
  });
});

describe('runsOf: the runs a fetched job carries', () => {
  it('reads a batch, and a job of an older version (one run at the top) as a batch of one', () => {
    const one = { runId: 'run-1', tenantId: 'tenant-1' };
    expect(runsOf({ runs: [one, { runId: 'run-2', tenantId: 'tenant-2' }] })).toHaveLength(2);
    expect(runsOf(one)).toEqual([one]);
  });
});
