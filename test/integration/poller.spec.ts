import { DataSource } from 'typeorm';
import { databaseRoundTrips, databaseWaits, Transactions } from '../../src/database';
import { OccurrencesService } from '../../src/occurrences';
import { OverlapService } from '../../src/overlap';
import { DueDispatcher, PollerService } from '../../src/poller';
import { Lifecycle } from '../../src/observability';
import { nextOccurrences } from '../../src/recurrence';
import { SHARD_COUNT } from '../../src/due-index';
import { eventually } from '../support/eventually';
import { ManualClock } from '../support/manual-clock';
import { oneTimeSchedulesAt, pollerWitness, tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i);

/** Waits until each schedule has an occurrence at or after `instant`: the pollers got there. */
async function everyScheduleReached(db: DataSource, ids: string[], instant: Date): Promise<void> {
  await eventually(
    async () => {
      const [{ behind }] = await db.query(
        `SELECT count(*)::int AS behind FROM unnest($1::uuid[]) AS s(id)
          WHERE NOT EXISTS (SELECT 1 FROM occurrences o
                             WHERE o.schedule_id = s.id AND o.scheduled_at >= $2)`,
        [ids, instant],
      );
      expect(behind).toBe(0);
    },
    { timeoutMs: 15_000 },
  );
}

/** Jobs in the runs queue per run id: each admitted QUEUED run must have exactly one. */
async function jobsPerRun(db: DataSource): Promise<Map<string, number>> {
  const rows = await db.query(
    `SELECT carried.run->>'runId' AS run_id, count(*)::int AS n
       FROM pgboss.job j, jsonb_array_elements(j.data->'runs') AS carried(run)
      WHERE j.name = 'dueline-runs' GROUP BY 1`,
  );
  return new Map(rows.map((r: { run_id: string; n: number }) => [r.run_id, r.n]));
}

describe('poller: due-time discovery and durable dispatch', () => {
  describe('with one poller', () => {
    let t: TestApp;
    let db: DataSource;
    let make: Awaited<ReturnType<typeof tenantWithTarget>>;

    beforeAll(async () => {
      t = await startTestApp({ ROLES: 'api,poller', POLLER_LEASE_SECONDS: '3' });
      db = t.app.get(DataSource);
      make = await tenantWithTarget(t);
    });
    afterAll(() => t.close());

    it('dispatches a one-time schedule once, never early, with its job, and completes it', async () => {
      const runAt = new Date(Date.now() + 1500);
      const schedule = await make.createSchedule({ runAt: runAt.toISOString() });
      const runs = await eventually(async () => {
        const rows = await db.query('SELECT * FROM occurrences WHERE schedule_id = $1', [
          schedule.id,
        ]);
        expect(rows).toHaveLength(1);
        return rows;
      });
      expect(runs[0]).toMatchObject({ state: 'QUEUED', revision: 1, trigger: 'schedule' });
      expect(new Date(runs[0].scheduled_at).getTime()).toBe(runAt.getTime());
      // Created by a transaction whose database clock had reached the due instant.
      expect(new Date(runs[0].created_at).getTime()).toBeGreaterThanOrEqual(runAt.getTime());
      expect((await jobsPerRun(db)).get(runs[0].id)).toBe(1);
      const [row] = await db.query('SELECT status, next_due_at FROM schedules WHERE id = $1', [
        schedule.id,
      ]);
      expect(row).toEqual({ status: 'completed', next_due_at: null });
      expect(
        await db.query('SELECT 1 FROM due_index WHERE schedule_id = $1', [schedule.id]),
      ).toHaveLength(0);
    });

    it('asks which runs are active only for schedules whose overlap policy keeps runs apart', async () => {
      const overlap = t.app.get(OverlapService);
      const asked: string[][] = [];
      const activeRuns = overlap.activeRuns.bind(overlap);
      const spy = jest.spyOn(overlap, 'activeRuns').mockImplementation((tx, ids) => {
        asked.push([...ids]);
        return activeRuns(tx, ids);
      });
      try {
        const runAt = new Date(Date.now() + 1000).toISOString();
        const allow = await make.createSchedule({ runAt, overlapPolicy: 'allow' });
        const skip = await make.createSchedule({ runAt, overlapPolicy: 'skip' });
        await eventually(async () => {
          const rows = await db.query(
            'SELECT state FROM occurrences WHERE schedule_id = ANY($1::uuid[])',
            [[allow.id, skip.id]],
          );
          expect(rows).toEqual([{ state: 'QUEUED' }, { state: 'QUEUED' }]);
        });
        // Under `allow` a new run queues whatever else is active (planNewRun): nothing to ask.
        expect(asked.flat()).toContain(skip.id);
        expect(asked.flat()).not.toContain(allow.id);
      } finally {
        spy.mockRestore();
      }
    });

    it("writes a batch's statements that need nothing of each other's answers together: they share a wait", async () => {
      const dispatcher = t.app.get(DueDispatcher);
      const poller = t.app.get(PollerService);
      await poller.beforeApplicationShutdown(); // this test drives the dispatcher itself
      try {
        const runAt = new Date(Date.now() + 300).toISOString();
        const schedules = await Promise.all(
          [0, 1, 2].map(() => make.createSchedule({ runAt, overlapPolicy: 'allow' })),
        );
        await new Promise((done) => setTimeout(done, 600));
        const before = { roundTrips: databaseRoundTrips(), waits: databaseWaits() };
        const batch = await dispatcher.dispatch(ALL_SHARDS, 100);
        const roundTrips = databaseRoundTrips() - before.roundTrips;
        const waits = databaseWaits() - before.waits;
        expect(batch).toMatchObject({ entries: 3, published: 3 });
        const rows = await db.query(
          'SELECT state FROM occurrences WHERE schedule_id = ANY($1::uuid[])',
          [schedules.map((s) => s.id)],
        );
        expect(rows).toEqual(Array(3).fill({ state: 'QUEUED' }));
        // Written behind another statement without waiting for its answer: BEGIN (with the
        // claim); the schedules' advance, their load's release and admission's permit locks and
        // budgets (with the due entries' delete; no next entries for one-time schedules); the
        // tokens' spending (with the jobs' insert); the COMMIT (behind the quota's release, the
        // transaction's last statement): eight, six waits for fourteen statements (it was four,
        // ten waits). The counters are the process's, and the jobs' insert is written after
        // pg-boss's look at its queue cache, which may read the database first: at least seven.
        expect(roundTrips - waits).toBeGreaterThanOrEqual(7);
      } finally {
        await poller.onApplicationBootstrap();
      }
    });

    it('prepares a batch ahead of its instant and commits it only once the database clock reaches it', async () => {
      const dispatcher = t.app.get(DueDispatcher);
      const poller = t.app.get(PollerService);
      await poller.beforeApplicationShutdown(); // this test drives the dispatcher itself
      try {
        const [{ at }] = await db.query(
          `SELECT date_trunc('milliseconds', clock_timestamp() + interval '700 milliseconds') AS at`,
        );
        const schedule = await make.createSchedule({ runAt: new Date(at).toISOString() });
        // Nothing is due yet: without a lookahead the batch is empty, and costs its BEGIN, the
        // claim that finds nothing and its COMMIT (no read of the clock, which plans nothing),
        // and two waits: BEGIN travels with the claim.
        const before = { roundTrips: databaseRoundTrips(), waits: databaseWaits() };
        const empty = await dispatcher.dispatch(ALL_SHARDS, 100);
        expect(databaseRoundTrips() - before.roundTrips).toBe(3);
        expect(databaseWaits() - before.waits).toBe(2);
        expect(empty).toMatchObject({ entries: 0, created: [], now: null });
        const seen: Array<{ visible: boolean; dueByDbClock: boolean }> = [];
        let dispatching = true;
        const watching = (async () => {
          while (dispatching) {
            const [row] = await db.query(
              `SELECT EXISTS (SELECT 1 FROM occurrences WHERE schedule_id = $1) AS visible,
                      clock_timestamp() >= $2::timestamptz AS "dueByDbClock"`,
              [schedule.id, at],
            );
            // Each probe is a round trip: sampling as fast as the database answers.
            seen.push(row);
          }
        })();
        const result = await dispatcher.dispatch(ALL_SHARDS, 100, { lookaheadMs: 5000 });
        dispatching = false;
        await watching;
        expect(result.created).toHaveLength(1);
        expect(result.now?.getTime()).toBe(new Date(at).getTime());
        const [{ reached }] = await db.query('SELECT clock_timestamp() >= $1 AS reached', [at]);
        expect(reached).toBe(true);
        // Held open while the instant was ahead: never visible before it.
        expect(seen.filter((s) => !s.dueByDbClock).length).toBeGreaterThan(10);
        expect(seen.filter((s) => s.visible && !s.dueByDbClock)).toEqual([]);
        const [run] = await db.query(
          'SELECT scheduled_at, created_at FROM occurrences WHERE schedule_id = $1',
          [schedule.id],
        );
        expect(run.created_at.getTime()).toBeGreaterThanOrEqual(run.scheduled_at.getTime());
        expect((await jobsPerRun(db)).size).toBeGreaterThan(0);
      } finally {
        await poller.onApplicationBootstrap();
      }
    });

    it('prepares the next instant beside a batch that waits for its own', async () => {
      const dispatcher = t.app.get(DueDispatcher);
      const poller = t.app.get(PollerService);
      await poller.beforeApplicationShutdown(); // this test drives the dispatcher itself
      try {
        const [{ first, second }] = await db.query(
          `SELECT date_trunc('milliseconds', clock_timestamp() + interval '800 milliseconds') AS first,
                  date_trunc('milliseconds', clock_timestamp() + interval '850 milliseconds') AS second`,
        );
        const a = await make.createSchedule({ runAt: new Date(first).toISOString() });
        const b = await make.createSchedule({ runAt: new Date(second).toISOString() });
        let waitingFor: string | null = null;
        const firstBatch = dispatcher.dispatch(ALL_SHARDS, 100, {
          lookaheadMs: 5000,
          onWaiting: (batch) => (waitingFor = batch.instant),
        });
        await eventually(() => expect(waitingFor).not.toBeNull(), { intervalMs: 5 });
        // Without `after` the next batch would look at the waiting batch's (locked) instant.
        expect((await dispatcher.dispatch(ALL_SHARDS, 100, { lookaheadMs: 5000 })).entries).toBe(0);
        const secondBatch = await dispatcher.dispatch(ALL_SHARDS, 100, {
          lookaheadMs: 5000,
          after: waitingFor,
        });
        const firstResult = await firstBatch;
        expect(firstResult.created).toHaveLength(1);
        expect(secondBatch.created).toHaveLength(1);
        expect(secondBatch.now?.getTime()).toBe(new Date(second).getTime());
        const runs = await db.query(
          `SELECT schedule_id, scheduled_at FROM occurrences WHERE schedule_id = ANY($1::uuid[])`,
          [[a.id, b.id]],
        );
        expect(
          Object.fromEntries(runs.map((r: any) => [r.schedule_id, r.scheduled_at.getTime()])),
        ).toEqual({ [a.id]: new Date(first).getTime(), [b.id]: new Date(second).getTime() });
      } finally {
        await poller.onApplicationBootstrap();
      }
    });

    it('holds every shard when alone and reports it', async () => {
      await eventually(() =>
        expect(t.app.get(PollerService).ownedShards()).toHaveLength(SHARD_COUNT),
      );
      const metrics = (await t.http.get('/metrics')).text;
      expect(metrics).toMatch(/dueline_shards_owned 128/);
      expect(metrics).toMatch(/dueline_clock_skew_seconds -?\d/);
    });

    it('drops entries of an old revision or a paused schedule without dispatching them', async () => {
      const schedule = await make.createSchedule({ cron: '0 0 1 1 *', timezone: 'UTC' });
      // Forge a due hint for an old revision, as a lagging edit might leave behind.
      await db.query(
        `INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
         SELECT shard, now() - interval '1 second', schedule_id, tenant_id, 0 FROM due_index WHERE schedule_id = $1`,
        [schedule.id],
      );
      await eventually(async () =>
        expect(
          await db.query('SELECT 1 FROM due_index WHERE schedule_id = $1 AND revision = 0', [
            schedule.id,
          ]),
        ).toHaveLength(0),
      );
      expect(
        await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1', [schedule.id]),
      ).toHaveLength(0);
    });

    it('loses nothing when the transaction dies before commit', async () => {
      const dispatcher = t.app.get(DueDispatcher);
      const poller = t.app.get(PollerService);
      await poller.beforeApplicationShutdown(); // this test drives the dispatcher itself
      try {
        const schedule = await make.createSchedule({
          runAt: new Date(Date.now() + 300).toISOString(),
        });
        await eventually(async () => {
          const [{ due }] = await db.query('SELECT now() >= $1::timestamptz AS due', [
            schedule.nextDueAt,
          ]);
          expect(due).toBe(true);
        });
        await expect(
          dispatcher.dispatch(ALL_SHARDS, 100, {
            beforeCommit: async () => {
              throw new Error('crash between the inserts and the commit');
            },
          }),
        ).rejects.toThrow('crash');
        expect(
          await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1', [schedule.id]),
        ).toHaveLength(0);
        expect(
          await db.query('SELECT 1 FROM due_index WHERE schedule_id = $1', [schedule.id]),
        ).toHaveLength(1);
        const result = await dispatcher.dispatch(ALL_SHARDS, 100);
        expect(result.created).toHaveLength(1);
        const [run] = await db.query('SELECT id FROM occurrences WHERE schedule_id = $1', [
          schedule.id,
        ]);
        expect((await jobsPerRun(db)).get(run.id)).toBe(1);
      } finally {
        await poller.onApplicationBootstrap();
      }
    });

    it('turns a DST transition into exactly the instants its preview shows', async () => {
      const schedule = await make.createSchedule({
        cron: '30 1 * * *',
        timezone: 'America/New_York',
        dstPolicy: { repeated: 'both' },
        missedRunPolicy: 'all',
        maxCatchUp: 20,
        overlapPolicy: 'allow',
      });
      // Move the schedule into the past across the 2024-11-03 fall-back (the database clock
      // decides due-ness, so the catch-up path is how a test reaches a past transition).
      const dueAt = new Date('2024-11-01T05:30:00Z');
      const endAt = new Date('2024-11-05T12:00:00Z');
      await db.query('UPDATE schedules SET end_at = $2, next_due_at = $3 WHERE id = $1', [
        schedule.id,
        endAt,
        dueAt,
      ]);
      await db.query('UPDATE due_index SET due_at = $2 WHERE schedule_id = $1', [
        schedule.id,
        dueAt,
      ]);
      const preview = nextOccurrences(
        {
          cron: '30 1 * * *',
          timezone: 'America/New_York',
          dstPolicy: { nonexistent: 'skip', repeated: 'both' },
          endAt,
        },
        new Date(dueAt.getTime() - 1),
        20,
      );
      const runs = await eventually(async () => {
        const rows = await db.query(
          'SELECT scheduled_at, scheduled_local, state FROM occurrences WHERE schedule_id = $1 ORDER BY scheduled_at',
          [schedule.id],
        );
        expect(rows).toHaveLength(preview.length);
        return rows;
      });
      expect(runs.map((r: { scheduled_at: Date }) => r.scheduled_at.toISOString())).toEqual(
        preview.map((p) => p.at.toISOString()),
      );
      expect(runs.map((r: { scheduled_local: string }) => r.scheduled_local)).toEqual(
        preview.map((p) => p.local),
      );
      // Independently: 01:30 EDT on Nov 3 is 05:30Z, 01:30 EST is 06:30Z.
      expect(runs.map((r: { scheduled_at: Date }) => r.scheduled_at.toISOString())).toEqual(
        expect.arrayContaining(['2024-11-03T05:30:00.000Z', '2024-11-03T06:30:00.000Z']),
      );
      const [row] = await db.query('SELECT status FROM schedules WHERE id = $1', [schedule.id]);
      expect(row.status).toBe('completed');
    });

    it('ignores a late duplicate write: the unique insert gives nothing back and nothing is published', async () => {
      const schedule = await make.createSchedule({
        runAt: new Date(Date.now() + 200).toISOString(),
      });
      const [first] = await eventually(async () => {
        const rows = await db.query('SELECT * FROM occurrences WHERE schedule_id = $1', [
          schedule.id,
        ]);
        expect(rows).toHaveLength(1);
        return rows;
      });
      const again = await t.app.get(Transactions).run((tx) =>
        t.app.get(OccurrencesService).insert(tx, [
          {
            tenantId: first.tenant_id,
            scheduleId: first.schedule_id,
            revision: first.revision,
            scheduledAt: new Date(first.scheduled_at),
            scheduledLocal: first.scheduled_local,
            state: 'QUEUED',
            reason: null,
            trigger: 'schedule',
            maxAttempts: 3,
            retryDeadlineSeconds: 60,
            priority: 'normal',
            startDeadlineSeconds: null,
          },
        ]),
      );
      expect(again).toEqual([]);
      expect(
        await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1', [schedule.id]),
      ).toHaveLength(1);
    });

    it('lets edits and cancels race the poller without old-revision or post-cancel runs', async () => {
      const witness = await pollerWitness(make, db);
      for (let i = 0; i < 3; i++) {
        const schedule = await make.createSchedule({
          cron: '* * * * * *',
          timezone: 'UTC',
          overlapPolicy: 'allow',
        });
        await eventually(async () =>
          expect(
            (await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1', [schedule.id]))
              .length,
          ).toBeGreaterThan(0),
        );
        const edit = await t.http
          .patch(`/schedules/${schedule.id}`)
          .set('Authorization', `Bearer ${make.tenant.apiKey}`)
          .set('If-Match', '1')
          .send({ cron: '*/2 * * * * *' });
        expect(edit.status).toBe(200);
        const editedAt = new Date(edit.body.updatedAt);
        await eventually(async () =>
          expect(
            (
              await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1 AND revision = 2', [
                schedule.id,
              ])
            ).length,
          ).toBeGreaterThan(0),
        );
        const cancel = await t.http
          .delete(`/schedules/${schedule.id}`)
          .set('Authorization', `Bearer ${make.tenant.apiKey}`);
        expect(cancel.status).toBe(200);
        const cancelledAt = new Date(cancel.body.updatedAt);
        const old = await db.query(
          'SELECT scheduled_at FROM occurrences WHERE schedule_id = $1 AND revision = 1 AND scheduled_at > $2',
          [schedule.id, editedAt],
        );
        expect(old).toEqual([]);
        const [{ n: afterCancel }] = await db.query(
          'SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1',
          [schedule.id],
        );
        // Two more seconds of an every-2-seconds cron: nothing new after the cancel committed.
        await witness.passed(new Date(cancelledAt.getTime() + 2100));
        const late = await db.query(
          'SELECT scheduled_at FROM occurrences WHERE schedule_id = $1 AND scheduled_at > $2',
          [schedule.id, cancelledAt],
        );
        expect(late).toEqual([]);
        const [{ n }] = await db.query(
          'SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1',
          [schedule.id],
        );
        expect(n).toBe(afterCancel);
      }
    });
  });

  it('several pollers racing over the same shards create every (schedule, instant) exactly once', async () => {
    // 150 creates back to back: more than the default management limit (a burst of 100) allows.
    const api = await startTestApp({
      ROLES: 'api',
      MANAGEMENT_RATE_PER_SECOND: '100000',
      MANAGEMENT_BURST: '100000',
    });
    const env = { DATABASE_URL: api.database.url, POLLER_LEASE_SECONDS: '2' };
    const pollers: TestApp[] = [];
    try {
      // 150 runs a second: the tenant's rate must allow that much projected load.
      const make = await tenantWithTarget(api, { dispatchRatePerSecond: 1000 });
      const schedules: Array<{ id: string }> = [];
      for (let i = 0; i < 150; i++) {
        schedules.push(
          await make.createSchedule({
            cron: '* * * * * *',
            timezone: 'UTC',
            overlapPolicy: 'allow',
          }),
        );
      }
      for (let i = 0; i < 3; i++)
        pollers.push(await startTestApp({ ...env, ROLES: 'poller' }, { database: api.database }));
      const db = api.app.get(DataSource);
      // Long enough for the three to rebalance the shards at least once while dispatching.
      await eventually(
        async () => {
          const owners = await db.query(
            'SELECT DISTINCT owner FROM shard_leases WHERE expires_at > now()',
          );
          expect(owners.length).toBe(3);
        },
        { timeoutMs: 15_000 },
      );
      // Every schedule dispatched through a couple more instants under the new owners.
      const [{ now: rebalancedAt }] = await db.query('SELECT now() AS now');
      await everyScheduleReached(
        db,
        schedules.map((s) => s.id),
        new Date(rebalancedAt.getTime() + 2000),
      );
      for (const poller of pollers.splice(0)) await poller.close();
      const rows: Array<{ schedule_id: string; instants: Date[] }> = await db.query(
        `SELECT schedule_id, array_agg(scheduled_at ORDER BY scheduled_at) AS instants
           FROM occurrences WHERE schedule_id = ANY($1::uuid[]) GROUP BY schedule_id`,
        [schedules.map((s) => s.id)],
      );
      expect(rows).toHaveLength(schedules.length);
      for (const { instants } of rows) {
        // Every second from the first instant to the last, none missing, none twice.
        const seconds = instants.map((d) => new Date(d).getTime() / 1000);
        expect(new Set(seconds).size).toBe(seconds.length);
        expect(seconds[seconds.length - 1] - seconds[0] + 1).toBe(seconds.length);
        expect(seconds.length).toBeGreaterThanOrEqual(2);
      }
      const jobs = await jobsPerRun(db);
      // An admitted run has exactly one job; one that waits for its tenant's budget has none.
      const runs = await db.query(
        `SELECT id, admitted_at IS NOT NULL AS admitted FROM occurrences
          WHERE schedule_id = ANY($1::uuid[]) AND state = 'QUEUED'`,
        [schedules.map((s) => s.id)],
      );
      expect(runs.length).toBeGreaterThan(0);
      for (const run of runs) expect(jobs.get(run.id) ?? 0).toBe(run.admitted ? 1 : 0);
    } finally {
      for (const poller of pollers) await poller.close();
      await api.close();
    }
  }, 90_000);

  it('a poller frozen past its lease loses its shards to another, then resumes: nothing twice, nothing lost', async () => {
    const a = await startTestApp({ ROLES: 'api,poller', POLLER_LEASE_SECONDS: '2' });
    const b = await startTestApp(
      { ROLES: 'poller', POLLER_LEASE_SECONDS: '2' },
      { database: a.database },
    );
    try {
      const db = a.app.get(DataSource);
      const make = await tenantWithTarget(a);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        ids.push(
          (
            await make.createSchedule({
              cron: '* * * * * *',
              timezone: 'UTC',
              overlapPolicy: 'allow',
            })
          ).id,
        );
      }
      const pa = a.app.get(PollerService);
      const pb = b.app.get(PollerService);
      await eventually(
        () => {
          expect(pa.ownedShards().length).toBe(64);
          expect(pb.ownedShards().length).toBe(64);
        },
        { timeoutMs: 15_000 },
      );
      // Freeze A without handing its shards over, as a paused process would.
      pa['running'] = false;
      pa['signal']();
      await pa['loop'];
      const frozenAt = Date.now();
      await eventually(() => expect(pb.ownedShards().length).toBe(SHARD_COUNT), {
        timeoutMs: 15_000,
      });
      // Within one lease period plus B's renewal cadence and A's presence expiry.
      expect(Date.now() - frozenAt).toBeLessThan(6000);
      // A wakes up still believing it holds its old shards; its first round finds them lost.
      pa['running'] = true;
      pa['loop'] = pa['run']();
      await eventually(() => expect(pa.ownedShards().length).toBe(64), { timeoutMs: 15_000 });
      // Both dispatch again: every schedule reaches an instant after A's return (under load the
      // shards A took back may still hold instants it has not dispatched yet).
      const [{ now: resumedAt }] = await db.query('SELECT now() AS now');
      await everyScheduleReached(db, ids, resumedAt);
      await b.close();
      const seconds = await db.query(
        `SELECT schedule_id, array_agg(extract(epoch FROM scheduled_at)::bigint ORDER BY scheduled_at) AS s
           FROM occurrences WHERE schedule_id = ANY($1::uuid[]) GROUP BY schedule_id`,
        [ids],
      );
      expect(seconds).toHaveLength(ids.length);
      for (const { s } of seconds as Array<{ s: string[] }>) {
        const list = s.map(Number);
        expect(new Set(list).size).toBe(list.length);
        expect(list[list.length - 1] - list[0] + 1).toBe(list.length);
      }
      const jobs = await jobsPerRun(db);
      for (const [, n] of jobs) expect(n).toBe(1);
      expect((await a.http.get('/metrics')).text).toMatch(/dueline_shard_lease_losses_total [1-9]/);
    } finally {
      await b.close();
      await a.close();
    }
  }, 90_000);
});

describe('poller: a throttled flood', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api,poller', POLLER_BATCH_SIZE: '300' });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  it('is written in small batches once a batch of it waits for its budget', async () => {
    const FLOOD = 700;
    const make = await tenantWithTarget(t, { dispatchRatePerSecond: 1, maxConcurrentRuns: 1 });
    // `low`: a flood its tenant's rate cannot carry in a minute is refused otherwise.
    await oneTimeSchedulesAt(t, make, FLOOD, await wholeSecondIn(db, 4), { priority: 'low' });
    // Spied on, not replaced: every commit's size while the flood is written.
    const emit = jest.spyOn(t.app.get(Lifecycle), 'emit');
    let commits: number[];
    try {
      await eventually(
        async () => {
          const [{ n }] = await db.query(
            `SELECT count(*)::int AS n FROM occurrences WHERE tenant_id = $1`,
            [make.tenant.id],
          );
          expect(n).toBe(FLOOD);
        },
        { timeoutMs: 30_000 },
      );
      commits = emit.mock.calls.flatMap(([event]) =>
        event.kind === 'dispatch.committed' && event.created.length > 0
          ? [event.created.length]
          : [],
      );
    } finally {
      emit.mockRestore();
    }
    // The first batch (configured size) admits one run and leaves 299 waiting: a throttled
    // flood's, so the batches after it are small.
    expect(commits[0]).toBe(300);
    expect(commits.slice(1).every((size) => size <= 100)).toBe(true);
    expect(commits.reduce((sum, size) => sum + size, 0)).toBe(FLOOD);
    const [{ waiting }] = await db.query(
      `SELECT count(*)::int AS waiting FROM occurrences
        WHERE tenant_id = $1 AND state = 'QUEUED' AND admitted_at IS NULL`,
      [make.tenant.id],
    );
    expect(waiting).toBeGreaterThan(FLOOD - 10);
  });
});

describe('poller: a drain longer than its lease', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    // A 1 s lease and small batches: the throttled flood below takes several leases to write.
    // Batches of 10 (each paced by its own time, a few ms) make it ~3 s on a fast host; with 20
    // and half the runs it took 1.1 s on one, less than the 1.5 s the test needs.
    t = await startTestApp({
      ROLES: 'api,poller',
      POLLER_LEASE_SECONDS: '1',
      POLLER_BATCH_SIZE: '10',
    });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  it('renews its leases between batches: it never lets its own shards expire', async () => {
    const FLOOD = 3200;
    const make = await tenantWithTarget(t, { dispatchRatePerSecond: 1, maxConcurrentRuns: 1 });
    await oneTimeSchedulesAt(t, make, FLOOD, await wholeSecondIn(db, 4), { priority: 'low' });
    // Spied on, not replaced; what it saw is kept before the spy goes.
    const emit = jest.spyOn(t.app.get(Lifecycle), 'emit');
    let seen: Array<Parameters<Lifecycle['emit']>[0]> | null = null;
    const events = () => seen ?? emit.mock.calls.map(([event]) => event);
    const writes = () =>
      events().flatMap((event) =>
        event.kind === 'dispatch.committed' && event.created.length > 0 ? [event] : [],
      );
    try {
      // 3-9 s on an idle host; over 60 s once beside a compiler on the same two cores (each of
      // its 320 small transactions waits for a core several times, and its pause with it).
      await eventually(
        () => expect(writes().reduce((sum, w) => sum + w.created.length, 0)).toBe(FLOOD),
        { timeoutMs: 150_000 },
      );
      // A lease round after the last batch: it tells whether the leases outlived the drain.
      const written = events().length;
      await eventually(() =>
        expect(
          events()
            .slice(written)
            .some((event) => event.kind === 'shards.held'),
        ).toBe(true),
      );
    } finally {
      seen = events();
      emit.mockRestore();
    }
    // The flood took longer to write than a lease lasts...
    const writtenAt = writes().map((w) => w.at.getTime());
    expect(writtenAt.at(-1)! - writtenAt[0]).toBeGreaterThan(1500);
    // ...and the poller held its shards all along.
    const lost = events().flatMap((event) => (event.kind === 'shards.held' ? event.lost : []));
    expect(lost).toEqual([]);
    expect((await t.http.get('/metrics')).text).toMatch(/^dueline_shard_lease_losses_total 0$/m);
  }, 180_000);
});

describe('poller: pause and resume', () => {
  let t: TestApp;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api,poller', POLLER_LEASE_SECONDS: '3' });
    db = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  it('pause stops new occurrences; resume applies the missed-run policy to the paused instants', async () => {
    const make = await tenantWithTarget(t);
    const witness = await pollerWitness(make, db);
    const schedule = await make.createSchedule({
      cron: '* * * * * *',
      timezone: 'UTC',
      overlapPolicy: 'allow',
      missedRunPolicy: 'latest',
    });
    const patch = (revision: number, body: object) =>
      t.http
        .patch(`/schedules/${schedule.id}`)
        .set('Authorization', `Bearer ${make.tenant.apiKey}`)
        .set('If-Match', String(revision))
        .send(body);
    await eventually(async () =>
      expect(
        (await db.query('SELECT 1 FROM occurrences WHERE schedule_id = $1', [schedule.id])).length,
      ).toBeGreaterThan(0),
    );
    const paused = await patch(1, { status: 'paused' });
    expect(paused.status).toBe(200);
    const pausedAt = new Date(paused.body.updatedAt);
    // Three instants pass while the poller keeps working: none of them becomes a run.
    await witness.passed(new Date(pausedAt.getTime() + 3200));
    const during = await db.query(
      'SELECT 1 FROM occurrences WHERE schedule_id = $1 AND created_at > $2',
      [schedule.id, pausedAt],
    );
    expect(during).toEqual([]);
    const resumed = await patch(2, { status: 'active' });
    expect(resumed.status).toBe(200);
    // The first run after the resume is the latest paused instant, with the others coalesced.
    const [run] = await eventually(async () => {
      const rows = await db.query(
        `SELECT * FROM occurrences WHERE schedule_id = $1 AND revision = 3 AND state = 'QUEUED' ORDER BY scheduled_at LIMIT 1`,
        [schedule.id],
      );
      expect(rows).toHaveLength(1);
      return rows;
    });
    expect(run.coalesced_count).toBeGreaterThanOrEqual(2);
    expect(new Date(run.coalesced_first).getTime()).toBeGreaterThan(pausedAt.getTime() - 1000);
    const skipped = await db.query(
      `SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1 AND revision = 3 AND reason = 'coalesced'`,
      [schedule.id],
    );
    expect(skipped[0].n).toBe(run.coalesced_count);
  });
});

describe('poller: a replica whose clock is wrong', () => {
  it('measures its skew against the database and still never dispatches early', async () => {
    const t = await startTestApp({ ROLES: 'api' });
    // The poller replica believes it is an hour later than it is; due-ness is the database's call.
    const poller = await startTestApp(
      { ROLES: 'poller' },
      { database: t.database, clock: ManualClock.skewed(3_600_000) },
    );
    try {
      const make = await tenantWithTarget(t);
      const db = t.app.get(DataSource);
      const runAt = new Date(Date.now() + 1500);
      const schedule = await make.createSchedule({ runAt: runAt.toISOString() });
      // Watch the ledger by the database clock until the run appears: it must never be
      // visible before its instant (a poller that trusted its own clock would write it at once).
      const seen: Array<{ visible: boolean; due: boolean }> = [];
      const deadline = Date.now() + 10_000;
      while (!seen.some((s) => s.visible) && Date.now() < deadline) {
        const [row] = await db.query(
          `SELECT EXISTS (SELECT 1 FROM occurrences WHERE schedule_id = $1) AS visible,
                  clock_timestamp() >= $2::timestamptz AS due`,
          [schedule.id, runAt],
        );
        seen.push(row);
      }
      expect(seen.some((s) => s.visible)).toBe(true);
      expect(seen.filter((s) => s.visible && !s.due)).toEqual([]);
      expect(seen.filter((s) => !s.due).length).toBeGreaterThan(10);
      const metrics = (await poller.http.get('/metrics')).text;
      const skew = Number(/^dueline_clock_skew_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(skew).toBeGreaterThan(3590);
      expect(skew).toBeLessThan(3610);
    } finally {
      await poller.close();
      await t.close();
    }
  });
});

/** The database clock's whole second `seconds` from now. */
async function wholeSecondIn(db: DataSource, seconds: number): Promise<Date> {
  const [{ at }] = await db.query(
    `SELECT date_trunc('second', clock_timestamp() + make_interval(secs => $1)) AS at`,
    [seconds],
  );
  return new Date(at);
}
