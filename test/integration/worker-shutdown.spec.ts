import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually } from '../support/eventually';
import { gate, HttpSink } from '../support/http-sink';
import { Transactions } from '../../src/database';
import { RunJobsRepository } from '../../src/queue';
import { WorkerService } from '../../src/worker';
import { startTestApp, TestApp } from '../support/test-app';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { carriesRun } from '../support/run-jobs';

/**
 * The worker acknowledges a run's queue job once the run is claimed, and its attempt goes on
 * beside the queue: stopping the worker must still wait for that attempt and write its outcome
 * under the fence, not leave the run RUNNING for the sweeper.
 */
describe('worker shutdown', () => {
  let database: TestDatabase;
  let api: TestApp;
  let sink: HttpSink;

  beforeAll(async () => {
    database = await createTestDatabase();
    sink = await HttpSink.start();
    api = await startTestApp({ ROLES: 'api', TARGET_ALLOWED_HOSTS: '127.0.0.1' }, { database });
  });
  afterAll(async () => {
    await api.close();
    await sink.close();
    await database.drop();
  });

  it('acknowledges the job at claim, and waits for the attempt in flight before it stops', async () => {
    const worker = await startTestApp(
      { ROLES: 'worker', TARGET_ALLOWED_HOSTS: '127.0.0.1' },
      { database },
    );
    const tenant = await api.createTenant(`t-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 10,
    });
    const as = <T extends { set: (k: string, v: string) => T }>(req: T) =>
      req.set('Authorization', `Bearer ${tenant.apiKey}`);
    const target = await as(api.http.post('/targets')).send({ name: 'hook', url: sink.url() });
    const schedule = await as(api.http.post('/schedules'))
      .set('Idempotency-Key', randomUUID())
      .send({
        name: 's',
        targetId: target.body.id,
        runAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
      });
    const held = gate();
    sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    const run = await as(api.http.post(`/schedules/${schedule.body.id}/trigger`));
    expect(run.status).toBe(201);
    const runId = run.body.id as string;
    const db = api.app.get(DataSource);
    const jobStates = async () =>
      (await db.query(`SELECT state FROM pgboss.job WHERE ${carriesRun('$1')}`, [runId])).map(
        (r: { state: string }) => r.state,
      );

    await eventually(async () => {
      expect(sink.forRun(runId)).toHaveLength(1);
      // The job is done (deleted) once its run is claimed, while the attempt goes on.
      expect(await jobStates()).toEqual([]);
    });

    const stopping = worker.close();
    // The worker has stopped fetching and is draining: the attempt is still in flight.
    await eventually(() => expect(worker.app.get(WorkerService).isRunning()).toBe(false));
    const [during] = await db.query(`SELECT state FROM occurrences WHERE id = $1`, [runId]);
    expect(during.state).toBe('RUNNING');
    held.open();
    await stopping;
    const [after] = await db.query(
      `SELECT o.state, a.outcome FROM occurrences o JOIN attempts a ON a.run_id = o.id
        WHERE o.id = $1`,
      [runId],
    );
    expect(after).toEqual({ state: 'SUCCEEDED', outcome: 'succeeded' });
  });

  it("leaves a fetched job's runs it has not claimed yet to the queue when told to stop", async () => {
    // One slot: a job of three runs is claimed one run at a time, the rest waiting for room.
    const oneSlot = {
      ROLES: 'worker',
      TARGET_ALLOWED_HOSTS: '127.0.0.1',
      WORKER_CONCURRENCY: '1',
      WORKER_BATCH_SIZE: '1',
      WORKER_RESERVED_HIGH_SHARE: '0',
    };
    const tenant = await api.createTenant(`t-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 10,
    });
    const as = <T extends { set: (k: string, v: string) => T }>(req: T) =>
      req.set('Authorization', `Bearer ${tenant.apiKey}`);
    const target = await as(api.http.post('/targets')).send({ name: 'hook', url: sink.url() });
    const runIds: string[] = [];
    const runs: Array<{ runId: string; tenantId: string; scheduledAt: Date }> = [];
    for (let i = 0; i < 3; i++) {
      const schedule = await as(api.http.post('/schedules'))
        .set('Idempotency-Key', randomUUID())
        .send({
          name: `s${i}`,
          targetId: target.body.id,
          runAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
        });
      const run = await as(api.http.post(`/schedules/${schedule.body.id}/trigger`));
      expect(run.status).toBe(201);
      runIds.push(run.body.id);
      runs.push({
        runId: run.body.id,
        tenantId: tenant.id,
        scheduledAt: new Date(run.body.scheduledAt),
      });
    }
    // The three runs in one job, as one dispatch would publish them.
    const db = api.app.get(DataSource);
    await db.query(`DELETE FROM pgboss.job WHERE name = 'dueline-runs'`);
    await api.app.get(Transactions).run((tx) => api.app.get(RunJobsRepository).publish(tx, runs));
    const held = gate();
    sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    const worker = await startTestApp(oneSlot, { database });
    const called = () => sink.requests.filter((r) => runIds.includes(r.body.runId as string));
    await eventually(() => expect(called()).toHaveLength(1), { timeoutMs: 15_000 });
    const first = called()[0].body.runId as string;
    const stopping = worker.close();
    await eventually(() => expect(worker.app.get(WorkerService).isRunning()).toBe(false));
    held.open();
    await stopping;
    const states = async () =>
      new Map(
        (
          await db.query(`SELECT id, state FROM occurrences WHERE id = ANY($1::uuid[])`, [runIds])
        ).map((r: { id: string; state: string }) => [r.id, r.state]),
      );
    // The run in flight ended under its fence; the other two were never claimed, and their job
    // is back in the queue (retried), not dropped.
    const stopped = await states();
    expect(stopped.get(first)).toBe('SUCCEEDED');
    expect(runIds.filter((id) => id !== first).map((id) => stopped.get(id))).toEqual([
      'QUEUED',
      'QUEUED',
    ]);
    const [job] = await db.query(
      `SELECT state FROM pgboss.job WHERE name = 'dueline-runs' AND ${carriesRun('$1')}`,
      [runIds.find((id) => id !== first)],
    );
    expect(job.state).toBe('retry');
    // Another worker takes them: each run called once, none twice.
    const next = await startTestApp(oneSlot, { database });
    try {
      await eventually(
        async () =>
          expect([...(await states()).values()]).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']),
        { timeoutMs: 20_000 },
      );
    } finally {
      await next.close();
    }
    expect(runIds.map((id) => sink.forRun(id).length)).toEqual([1, 1, 1]);
  });
});
