import { RunHandoff, type HandoffReceiver } from '../../src/handoff';
import type { HandedOffJob } from '../../src/queue';
import { WorkerService } from '../../src/worker';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';
import { carriesRun } from '../support/run-jobs';
import { startTestApp } from '../support/test-app';
import { startExecutionWorld, type ExecutionWorld } from './execution.fixtures';

/** A one-time schedule due `inMs` from now on a target of its own, and its run once made. */
async function runDueIn(world: ExecutionWorld, inMs: number): Promise<string> {
  const targetId = await world.createTarget();
  const scheduleId = await world.createSchedule(targetId, {
    runAt: new Date(Date.now() + inMs).toISOString(),
  });
  return runOf(world, scheduleId);
}

/** The run of a one-time schedule, once the poller has made it. */
async function runOf(world: ExecutionWorld, scheduleId: string): Promise<string> {
  let runId = '';
  await eventually(async () => {
    const rows: Array<{ id: string }> = await world.db.query(
      'SELECT id FROM occurrences WHERE schedule_id = $1',
      [scheduleId],
    );
    expect(rows).toHaveLength(1);
    runId = rows[0].id;
  });
  return runId;
}

/**
 * A run dispatched at its instant goes straight to a worker of the same service (handoff/): its
 * job is written held back from fetches for WORKER_HANDOFF_GRACE_MS, so the worker that takes it
 * claims it with no fetch between; a job nobody claims is any worker's when the grace ends.
 */
describe('the handoff of dispatched runs to the worker beside the poller', () => {
  let world: ExecutionWorld | null = null;
  afterEach(async () => {
    await world?.close();
    world = null;
  });

  it('delivers a run long before its job could be fetched, and deletes the job', async () => {
    // A grace far longer than the test: a delivery within it did not come through a fetch.
    world = await startExecutionWorld('api,poller,worker', { WORKER_HANDOFF_GRACE_MS: '60000' });
    const w = world;
    const runId = await runDueIn(w, 1500);
    await eventually(async () => {
      expect(w.sink.forRun(runId)).toHaveLength(1);
      expect((await w.run(runId)).state).toBe('SUCCEEDED');
    });
    expect(await w.metric('dueline_handoff_runs_total')).toBe(1);
    expect(await w.metric('dueline_handoff_released_runs_total')).toBe(0);
    await eventually(async () =>
      expect(
        await w.db.query(`SELECT id FROM pgboss.job WHERE ${carriesRun('$1')}`, [runId]),
      ).toEqual([]),
    );
  });

  it("hands over the runs the admitter releases from a tenant's waiting list too", async () => {
    world = await startExecutionWorld(
      'api,poller,relay,worker',
      { WORKER_HANDOFF_GRACE_MS: '60000' },
      { dispatchRatePerSecond: 2 },
    );
    const w = world;
    const targetId = await w.createTarget();
    const at = new Date(Date.now() + 1500).toISOString();
    const scheduleIds = [];
    for (let i = 0; i < 6; i++) scheduleIds.push(await w.createSchedule(targetId, { runAt: at }));
    const runIds = await Promise.all(scheduleIds.map((id) => runOf(w, id)));
    await eventually(
      () => {
        for (const runId of runIds) expect(w.sink.forRun(runId)).toHaveLength(1);
      },
      { timeoutMs: 20_000 },
    );
    // Some waited for their tenant's rate (the admitter released them); every one came by hand.
    const [waited] = await w.db.query(
      `SELECT count(*)::int AS n FROM occurrences WHERE id = ANY($1) AND admitted_at > created_at`,
      [runIds],
    );
    expect(waited.n).toBeGreaterThan(0);
    expect(await w.metric('dueline_handoff_runs_total')).toBe(6);
  });

  it('writes jobs fetchable at once, as before, when the handoff is off', async () => {
    world = await startExecutionWorld('api,poller,worker', { WORKER_HANDOFF_GRACE_MS: '0' });
    const w = world;
    const runId = await runDueIn(w, 1500);
    await eventually(() => expect(w.sink.forRun(runId)).toHaveLength(1));
    expect(await w.metric('dueline_handoff_runs_total')).toBe(0);
  });

  it('leaves a job its worker never claimed to any worker when the grace ends: one call', async () => {
    const graceMs = 1500;
    // The poller's process has no worker of its own; a receiver that drops what it is handed
    // stands for a worker process that died with the jobs in its channel.
    world = await startExecutionWorld('api,poller', { WORKER_HANDOFF_GRACE_MS: String(graceMs) });
    const w = world;
    const dropped: HandedOffJob[] = [];
    const lost: HandoffReceiver = {
      room: () => ({ high: 100, other: 100 }),
      take: (jobs) => dropped.push(...jobs),
    };
    w.t.app.get(RunHandoff).register(lost);
    const worker = await startTestApp(
      {
        ROLES: 'worker',
        TARGET_ALLOWED_HOSTS: '127.0.0.1',
        WORKER_HANDOFF_GRACE_MS: String(graceMs),
      },
      { database: w.t.database },
    );
    try {
      const arrivals: number[] = [];
      w.sink.behave(() => {
        arrivals.push(Date.now());
        return { status: 200 };
      });
      const targetId = await w.createTarget();
      const scheduleId = await w.createSchedule(targetId, {
        runAt: new Date(Date.now() + 1000).toISOString(),
      });
      const runId = await runOf(w, scheduleId);
      // Handed over once its dispatch's COMMIT is answered, which may reach the poller after
      // the run's row is seen committed on another connection.
      await eventually(() =>
        expect(dropped.flatMap((job) => job.runs.map((run) => run.runId))).toEqual([runId]),
      );
      // Its job waits out the grace: nobody fetches it before.
      const [job] = await w.db.query(
        `SELECT state, extract(epoch FROM start_after) * 1000 AS fetchable_at
           FROM pgboss.job WHERE ${carriesRun('$1')}`,
        [runId],
      );
      expect(job.state).toBe('created');
      await eventually(async () => {
        expect(w.sink.forRun(runId)).toHaveLength(1);
        expect((await w.run(runId)).state).toBe('SUCCEEDED');
      });
      expect(arrivals[0]).toBeGreaterThanOrEqual(Number(job.fetchable_at));
      // And only once: the job was fetched, claimed and deleted like any other.
      await new Promise((done) => setTimeout(done, 500));
      expect(w.sink.forRun(runId)).toHaveLength(1);
      expect(
        await w.db.query(`SELECT id FROM pgboss.job WHERE ${carriesRun('$1')}`, [runId]),
      ).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it('leaves a handed-off job to the queue when no slot frees within half its grace', async () => {
    world = await startExecutionWorld('api,poller,worker', {
      WORKER_HANDOFF_GRACE_MS: '1000',
      WORKER_CONCURRENCY: '1',
      WORKER_BATCH_SIZE: '1',
      WORKER_RESERVED_HIGH_SHARE: '0',
    });
    const w = world;
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    const targetId = await w.createTarget();
    const busyRun = await w.trigger(await w.createSchedule(targetId));
    await eventually(() => expect(w.sink.forRun(busyRun)).toHaveLength(1));
    // The only slot is taken: the poller hands nothing now (its worker has no room)...
    const scheduleId = await w.createSchedule(targetId, {
      runAt: new Date(Date.now() + 500).toISOString(),
    });
    const queuedRun = await runOf(w, scheduleId);
    // ...and a handoff that arrives anyway waits half its grace for the slot, then lets go.
    const worker = w.t.app.get(WorkerService);
    expect(worker.room()).toEqual({ high: 0, other: 0 });
    const startedAt = Date.now();
    await worker.takeHandoff([
      {
        queue: 'dueline-runs',
        id: '00000000-0000-4000-8000-000000000001',
        runs: [{ runId: queuedRun, tenantId: w.tenant.id }],
      },
    ]);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(450);
    expect(await w.metric('dueline_handoff_released_runs_total')).toBe(1);
    expect(await w.metric('dueline_handoff_runs_total')).toBe(0);
    expect(w.sink.forRun(queuedRun)).toHaveLength(0);
    // The run's own job (published to the queue) brings it once the slot is free.
    held.open();
    await eventually(() => expect(w.sink.forRun(queuedRun)).toHaveLength(1));
    expect(w.sink.forRun(busyRun)).toHaveLength(1);
  });
});
