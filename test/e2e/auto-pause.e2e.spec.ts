import { AutoPauseLoop } from '../../src/relay';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Auto-pause with two replicas running the relay on one database. Their timers are set far
 * apart so the test runs (and races) the rounds itself; the test plays the external worker that
 * ends runs FAILED, UNKNOWN or SUCCEEDED.
 */
describe('auto-pause after consecutive failures', () => {
  let w: ExecutionWorld;
  let second: TestApp;
  const ENV = { RELAY_AUTO_PAUSE_INTERVAL_MS: '600000' };

  const post = (path: string, body?: object) => {
    const req = w.auth(w.t.http.post(path));
    return body === undefined ? req : req.send(body);
  };
  const rounds = () =>
    Promise.all([w.t.app.get(AutoPauseLoop).tick(), second.app.get(AutoPauseLoop).tick()]);

  let minute = 0;
  async function ended(scheduleId: string, outcome: 'failed' | 'unknown' | 'succeeded') {
    const runId = await w.insertRun(scheduleId, new Date(Date.UTC(2026, 0, 1, 0, minute++)), {
      publish: true,
    });
    const claim = await post(`/runs/${runId}/claim`);
    expect(claim.status).toBe(200);
    const done = await post(`/runs/${runId}/complete`, {
      fencingToken: claim.body.fencingToken,
      outcome,
      retryable: false,
    });
    expect(done.status).toBe(200);
    return runId;
  }
  const read = async (id: string) => (await w.auth(w.t.http.get(`/schedules/${id}`))).body;
  const revisions = async (id: string) =>
    (await w.auth(w.t.http.get(`/schedules/${id}/revisions`))).body.items;

  beforeAll(async () => {
    w = await startExecutionWorld('api,relay', ENV);
    second = await startTestApp({ ...ENV, ROLES: 'relay' }, { database: w.t.database });
  });
  afterAll(async () => {
    await second.close();
    await w.close();
  });

  it('3 consecutive failures pause the schedule exactly once across two replicas; a resume starts the count again', async () => {
    const targetId = await w.createTarget();
    const id = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
      pauseAfterConsecutiveFailures: 3,
    });
    expect((await read(id)).pauseAfterConsecutiveFailures).toBe(3);
    const streak = [await ended(id, 'failed'), await ended(id, 'unknown')];
    expect(await rounds()).toEqual([0, 0]);
    streak.push(await ended(id, 'failed'));

    const paused = await rounds();
    expect(paused[0] + paused[1]).toBe(1);
    const schedule = await read(id);
    expect(schedule).toMatchObject({
      status: 'paused',
      pausedReason: 'consecutive_failures',
      revision: 2,
      nextDueAt: null,
    });
    for (const runId of streak) expect(schedule.pausedNote).toContain(runId);
    const [revision] = await revisions(id);
    expect(revision).toMatchObject({
      revision: 2,
      change: 'auto_paused',
      changedByApiKeyId: null,
      changes: [{ field: 'status', from: 'active', to: 'paused' }],
    });
    expect(revision.note).toBe(schedule.pausedNote);
    // Further rounds and further failures change nothing: it is paused once.
    await ended(id, 'failed');
    expect(await rounds()).toEqual([0, 0]);
    expect((await read(id)).revision).toBe(2);

    // Resuming is an ordinary PATCH with If-Match; the failures before it no longer count.
    const resumed = await w
      .auth(w.t.http.patch(`/schedules/${id}`))
      .set('If-Match', '"2"')
      .send({ status: 'active' });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', pausedReason: null, pausedNote: null });
    expect(await rounds()).toEqual([0, 0]);
    // A success breaks a streak.
    await ended(id, 'failed');
    await ended(id, 'failed');
    await ended(id, 'succeeded');
    await ended(id, 'failed');
    expect(await rounds()).toEqual([0, 0]);
    await ended(id, 'unknown');
    await ended(id, 'failed');
    const again = await rounds();
    expect(again[0] + again[1]).toBe(1);
    expect(await read(id)).toMatchObject({ status: 'paused', revision: 4 });
    const kinds = (await revisions(id)).map((r: { change: string }) => r.change);
    expect(kinds).toEqual(['auto_paused', 'resumed', 'auto_paused', 'created']);
  });

  it('a schedule without the setting, or paused by hand, is never auto-paused', async () => {
    const targetId = await w.createTarget();
    const plain = await w.createSchedule(targetId, {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
    });
    for (let i = 0; i < 3; i++) await ended(plain, 'failed');
    expect(await rounds()).toEqual([0, 0]);
    expect((await read(plain)).status).toBe('active');
    const byHand = await w
      .auth(w.t.http.patch(`/schedules/${plain}`))
      .set('If-Match', '"1"')
      .send({ status: 'paused' });
    expect(byHand.body).toMatchObject({
      status: 'paused',
      pausedReason: 'paused_by_request',
      pausedNote: null,
    });
  });

  it.each([0, 101, 1.5, 'three'])(
    'refuses pauseAfterConsecutiveFailures %p (400, nothing written)',
    async (value) => {
      const targetId = await w.createTarget();
      const [{ n: before }] = await w.db.query('SELECT count(*)::int AS n FROM schedules');
      const res = await w
        .auth(w.t.http.post('/schedules'))
        .set('Idempotency-Key', `k-${String(value)}`)
        .send({
          name: 's',
          targetId,
          cron: '0 9 * * *',
          timezone: 'UTC',
          pauseAfterConsecutiveFailures: value,
        });
      expect(res.status).toBe(400);
      const [{ n: after }] = await w.db.query('SELECT count(*)::int AS n FROM schedules');
      expect(after).toBe(before);
    },
  );
});
