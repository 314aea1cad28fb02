import { randomUUID } from 'node:crypto';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';
import { carriesRun } from '../support/run-jobs';

/**
 * The fleet's capacity, shared: when tenants have admitted more than the workers can run, the
 * free places go to the waiting tenants in proportion to their `weight` quota, and the slots a
 * worker keeps for `high` runs are never taken by the others. Small fleets (a few slots) so that
 * saturation is the normal case here.
 */
describe('fleet share', () => {
  /** A tenant with its own path on the sink, and `count` one-time schedules due at `at`. */
  const floodingTenant = async (
    w: ExecutionWorld,
    name: string,
    quotas: Record<string, number>,
    count: number,
    at: Date,
    body: Record<string, unknown> = {},
  ) => {
    const tenant = await w.t.createTenant(`${name}-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 10_000,
      maxConcurrentRuns: 1_000,
      dispatchRatePerSecond: 10_000,
      ...quotas,
    });
    const target = await w.auth(w.t.http.post('/targets'), tenant.apiKey).send({
      name: `target-${name}`,
      url: w.sink.url(`/${name}`),
      deduplicates: true,
    });
    expect(target.status).toBe(201);
    const items = Array.from({ length: count }, (_, i) => ({
      idempotencyKey: randomUUID(),
      schedule: {
        name: `${name}-${i}`,
        targetId: target.body.id,
        runAt: at.toISOString(),
        overlapPolicy: 'allow',
        ...body,
      },
    }));
    const res = await w.auth(w.t.http.post('/schedules/batch'), tenant.apiKey).send({ items });
    expect(res.status).toBe(200);
    expect(res.body.items.every((item: { status: number }) => item.status === 201)).toBe(true);
    return tenant;
  };

  describe('weights', () => {
    let w: ExecutionWorld;
    beforeAll(async () => {
      w = await startExecutionWorld('api,poller,worker,relay', {
        WORKER_CONCURRENCY: '6',
        WORKER_BATCH_SIZE: '2',
        WORKER_RESERVED_HIGH_SHARE: '0',
        ADMISSION_FLEET_BACKLOG: '6',
        ADMISSION_INTERVAL_MS: '10',
      });
    });
    afterAll(() => w.close());

    it('three flooding tenants of weights 1, 1, 2 get 25 / 25 / 50 % of deliveries', async () => {
      // Every call takes a while, so the six slots, not the tenants' quotas, are the limit.
      w.sink.behave(async () => {
        await new Promise((done) => setTimeout(done, 25));
        return { status: 200 };
      });
      const due = new Date(Date.now() + 3000);
      await floodingTenant(w, 'one', { weight: 1 }, 120, due);
      await floodingTenant(w, 'two', { weight: 1 }, 120, due);
      await floodingTenant(w, 'heavy', { weight: 2 }, 120, due);
      await eventually(() => expect(w.sink.requests.length).toBeGreaterThanOrEqual(200), {
        timeoutMs: 60_000,
      });
      // While all three have a backlog: the heavy tenant, at half the deliveries, runs out of
      // its 120 at about the 240th. The first 30 are the start (the poller's first admission).
      const window = w.sink.requests.slice(30, 200);
      const share = (path: string) =>
        (100 * window.filter((r) => r.path === `/${path}`).length) / window.length;
      expect(Math.abs(share('one') - 25)).toBeLessThanOrEqual(10);
      expect(Math.abs(share('two') - 25)).toBeLessThanOrEqual(10);
      expect(Math.abs(share('heavy') - 50)).toBeLessThanOrEqual(10);
      // None was lost.
      await eventually(
        async () => {
          const [done] = await w.db.query(
            `SELECT count(*) FILTER (WHERE state = 'SUCCEEDED')::int AS ok, count(*)::int AS all
               FROM occurrences`,
          );
          expect(done).toEqual({ ok: 360, all: 360 });
        },
        { timeoutMs: 60_000 },
      );
    });

    it('runs waiting for a place are QUEUED throttled_fleet with no queue job', async () => {
      const held = gate();
      w.sink.behave(async () => {
        await held.promise;
        return { status: 200 };
      });
      const before = w.sink.requests.length;
      const tenant = await floodingTenant(w, 'waits', {}, 30, new Date(Date.now() + 2000));
      try {
        const waiting = await eventually(async () => {
          // Read once the fleet is full (six slots held at the sink, the queue's backlog of six
          // admitted): from then on nothing more is admitted, so what waits stays waiting.
          const [backlog] = await w.db.query(
            `SELECT count(*)::int AS n FROM occurrences
              WHERE tenant_id = $1 AND state = 'QUEUED' AND admitted_at IS NOT NULL`,
            [tenant.id],
          );
          expect(w.sink.requests.length - before).toBe(6);
          expect(backlog.n).toBeGreaterThanOrEqual(6);
          const rows = await w.db.query(
            `SELECT o.id,
                    (SELECT count(*)::int FROM pgboss.job j
                      WHERE ${carriesRun('o.id', 'j')}) AS jobs
               FROM occurrences o
              WHERE o.tenant_id = $1 AND o.state = 'QUEUED' AND o.reason = 'throttled_fleet'`,
            [tenant.id],
          );
          // Six slots busy, six (or, with two admissions deciding at once, a few more) admitted
          // in the queue: the rest wait for a place.
          expect(rows.length).toBe(30 - 6 - backlog.n);
          expect(rows.length).toBeGreaterThan(0);
          return rows;
        });
        for (const run of waiting) expect(run.jobs).toBe(0);
        const shown = await w.auth(w.t.http.get(`/runs/${waiting[0].id}`), tenant.apiKey);
        expect(shown.body).toMatchObject({ state: 'QUEUED', reason: 'throttled_fleet' });
      } finally {
        held.open();
      }
      await eventually(
        async () => {
          const [row] = await w.db.query(
            `SELECT count(*)::int AS n FROM occurrences WHERE tenant_id = $1 AND state = 'SUCCEEDED'`,
            [tenant.id],
          );
          expect(row.n).toBe(30);
        },
        { timeoutMs: 30_000 },
      );
    });
  });

  describe('reserved slots for high runs', () => {
    let w: ExecutionWorld;
    beforeAll(async () => {
      w = await startExecutionWorld('api,poller,worker,relay', {
        WORKER_CONCURRENCY: '5',
        WORKER_BATCH_SIZE: '2',
        WORKER_RESERVED_HIGH_SHARE: '20',
        ADMISSION_INTERVAL_MS: '10',
      });
    });
    afterAll(() => w.close());

    it('a worker saturated by normal runs still starts a high run at once', async () => {
      const held = gate();
      w.sink.behave(async (req) => {
        if (req.path === '/normal') await held.promise;
        return { status: 200 };
      });
      try {
        await floodingTenant(w, 'normal', {}, 20, new Date(Date.now() + 1500));
        // Four of five slots are the normal runs' most: they hold them, the rest queue.
        await eventually(() =>
          expect(w.sink.requests.filter((r) => r.path === '/normal')).toHaveLength(4),
        );
        const urgent = await floodingTenant(w, 'urgent', {}, 1, new Date(Date.now() + 1500), {
          priority: 'high',
        });
        await eventually(
          () => expect(w.sink.requests.filter((r) => r.path === '/urgent')).toHaveLength(1),
          { timeoutMs: 10_000 },
        );
        await eventually(async () => {
          const [run] = await w.db.query(`SELECT state FROM occurrences WHERE tenant_id = $1`, [
            urgent.id,
          ]);
          expect(run.state).toBe('SUCCEEDED');
        });
        // The normal runs never took the reserved slot, though nineteen were waiting for one.
        expect(w.sink.requests.filter((r) => r.path === '/normal')).toHaveLength(4);
      } finally {
        held.open();
      }
      await eventually(
        () => expect(w.sink.requests.filter((r) => r.path === '/normal')).toHaveLength(20),
        { timeoutMs: 30_000 },
      );
    });
  });
});
