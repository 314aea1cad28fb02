import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually } from '../support/eventually';
import { gate, HttpSink } from '../support/http-sink';
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
});
