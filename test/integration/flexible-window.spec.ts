import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

/**
 * flexibleWindowSeconds: a run fires at its planned instant within [due, due + window], the
 * same one the schedule, its preview and the run show; never before it. The nominal instant
 * stays the run's identity (scheduledAt).
 */
describe('flexible windows', () => {
  let w: ExecutionWorld;
  let targetId: string;

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,worker,relay');
    targetId = await w.createTarget();
  });
  afterAll(() => w.close());

  it('fires each run at its planned instant inside the window, never earlier', async () => {
    const received = new Map<string, number>();
    w.sink.behave((req) => {
      received.set(req.headers['idempotency-key'] as string, Date.now());
      return { status: 200 };
    });
    const due = new Date(Math.ceil((Date.now() + 2000) / 1000) * 1000);
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(
        await w.createSchedule(targetId, { runAt: due.toISOString(), flexibleWindowSeconds: 3 }),
      );
    }
    const schedules = await Promise.all(
      ids.map(async (id) => (await w.auth(w.t.http.get(`/schedules/${id}`))).body),
    );
    const previews = await Promise.all(
      ids.map(async (id) => (await w.auth(w.t.http.get(`/schedules/${id}/preview`))).body),
    );
    const planned = schedules.map((s) => new Date(s.nextFiresAt).getTime());
    schedules.forEach((s, i) => {
      expect(s.flexibleWindowSeconds).toBe(3);
      expect(s.nextDueAt).toBe(due.toISOString());
      expect(previews[i].items[0]).toMatchObject({ at: due.toISOString(), firesAt: s.nextFiresAt });
      expect(planned[i]).toBeGreaterThanOrEqual(due.getTime());
      expect(planned[i]).toBeLessThanOrEqual(due.getTime() + 3000);
    });
    // Eight schedules of one instant, spread over the window (not all at its start).
    expect(new Set(planned).size).toBeGreaterThan(4);
    const runs = await eventually(
      async () => {
        const rows = await w.db.query(
          `SELECT id, schedule_id, state FROM occurrences WHERE schedule_id = ANY($1::uuid[])`,
          [ids],
        );
        expect(rows.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(8);
        return rows as Array<{ id: string; schedule_id: string }>;
      },
      { timeoutMs: 20_000 },
    );
    for (const row of runs) {
      const run = await w.run(row.id);
      const i = ids.indexOf(row.schedule_id);
      expect(run.scheduledAt).toBe(due.toISOString());
      expect(run.firesAt).toBe(schedules[i].nextFiresAt);
      // Never before the planned instant (the database clock decides; this one is close).
      expect(received.get(row.id)!).toBeGreaterThanOrEqual(planned[i] - 50);
      const [request] = w.sink.forRun(row.id);
      expect(request.headers['x-dueline-scheduled-at']).toBe(due.toISOString());
    }
  });

  it('refuses a window as long as the gap between two runs, or over an hour', async () => {
    const tooWide = await w
      .auth(w.t.http.post('/schedules'))
      .set('Idempotency-Key', `k-${Date.now()}`)
      .send({
        name: 'w',
        targetId,
        cron: '*/10 * * * * *',
        timezone: 'UTC',
        flexibleWindowSeconds: 10,
      });
    expect(tooWide.status).toBe(400);
    expect(tooWide.body.errors).toEqual([
      expect.objectContaining({ field: 'flexibleWindowSeconds' }),
    ]);
    const overAnHour = await w
      .auth(w.t.http.post('/schedules'))
      .set('Idempotency-Key', `k2-${Date.now()}`)
      .send({
        name: 'w',
        targetId,
        runAt: new Date(Date.now() + 86_400_000).toISOString(),
        flexibleWindowSeconds: 3601,
      });
    expect(overAnHour.status).toBe(400);
    const [{ n }] = await w.db.query(`SELECT count(*)::int AS n FROM schedules WHERE name = 'w'`);
    expect(n).toBe(0);
  });

  it('a cron schedule with a window fires every instant once, in order', async () => {
    const received: number[] = [];
    w.sink.behave(() => {
      received.push(Date.now());
      return { status: 200 };
    });
    const id = await w.createSchedule(targetId, {
      cron: '*/2 * * * * *',
      timezone: 'UTC',
      runAt: undefined,
      flexibleWindowSeconds: 1,
    });
    const runs = await eventually(
      async () => {
        const rows = await w.db.query(
          `SELECT scheduled_at, fires_at, state FROM occurrences WHERE schedule_id = $1
            ORDER BY scheduled_at`,
          [id],
        );
        expect(rows.filter((r: { state: string }) => r.state === 'SUCCEEDED').length).toBe(4);
        return rows as Array<{ scheduled_at: Date; fires_at: Date }>;
      },
      { timeoutMs: 20_000 },
    );
    await w.auth(w.t.http.delete(`/schedules/${id}`));
    for (const run of runs) {
      const offset = run.fires_at.getTime() - run.scheduled_at.getTime();
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThanOrEqual(1000);
      expect(run.scheduled_at.getUTCSeconds() % 2).toBe(0);
    }
    // Consecutive nominal instants, none skipped or doubled.
    for (let i = 1; i < runs.length; i++) {
      expect(runs[i].scheduled_at.getTime() - runs[i - 1].scheduled_at.getTime()).toBe(2000);
    }
  });
});
