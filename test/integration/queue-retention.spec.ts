import { RUN_QUEUES } from '../../src/queue';
import { SqlRunner } from '../../src/database';
import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

/**
 * Completed run jobs do not pile up in pgboss.job: the worker deletes a batch's jobs once their
 * runs are claimed, and the queues keep whatever still finishes in pg-boss only for
 * QUEUE_FINISHED_JOB_RETENTION_SECONDS.
 */
describe('queue retention', () => {
  let w: ExecutionWorld;
  let sql: SqlRunner;

  const jobs = async () =>
    (
      await sql.rows<{ state: string; n: number }>(
        `SELECT state, count(*)::int AS n FROM pgboss.job WHERE name = ANY($1::text[])
          GROUP BY state ORDER BY state`,
        [[...RUN_QUEUES]],
      )
    ).map((row) => `${row.state}:${row.n}`);

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker', { QUEUE_FINISHED_JOB_RETENTION_SECONDS: '120' });
    sql = w.t.app.get(SqlRunner);
  });
  afterAll(() => w.close());

  it('deletes the job of every delivered run instead of keeping it completed', async () => {
    const target = await w.createTarget();
    const schedule = await w.createSchedule(target);
    const runs: string[] = [];
    for (let i = 0; i < 20; i++) runs.push(await w.trigger(schedule));
    await eventually(
      async () => {
        for (const id of runs) expect((await w.run(id)).state).toBe('SUCCEEDED');
      },
      { timeoutMs: 20_000 },
    );
    // The job's delete follows the claim in the same handler: wait for the handler, not a clock.
    await eventually(async () => expect(await jobs()).toEqual([]));
  });

  it('keeps jobs that finish in pg-boss only for the configured retention', async () => {
    const [row] = await sql.rows<{ deletion_seconds: number }>(
      `SELECT min(deletion_seconds)::int AS deletion_seconds, max(deletion_seconds)::int AS most
         FROM pgboss.queue WHERE name = ANY($1::text[])`,
      [[...RUN_QUEUES]],
    );
    expect(row).toEqual({ deletion_seconds: 120, most: 120 });
  });
});
