import { randomUUID } from 'node:crypto';
import { BackfillsService } from '../../src/backfills';
import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';

type Instant = { at: string; local: string; action: string };

describe('backfills', () => {
  describe('through the API (no poller, no worker: the test plays the worker)', () => {
    let w: ExecutionWorld;
    let targetId: string;
    let other: { id: string; apiKey: string };

    const backfill = (
      scheduleId: string,
      body: object,
      key: string | null = randomUUID(),
      apiKey?: string,
    ) => {
      const req = w.auth(w.t.http.post(`/schedules/${scheduleId}/backfills`), apiKey);
      return (key ? req.set('Idempotency-Key', key) : req).send(body);
    };
    const cron = (body: object = {}) =>
      w.createSchedule(targetId, { runAt: undefined, cron: '0 9 * * *', timezone: 'UTC', ...body });
    const count = async (table: string) =>
      (await w.db.query(`SELECT count(*)::int AS n FROM ${table}`))[0].n as number;
    const advance = (id: string) => w.t.app.get(BackfillsService).advance(id);

    beforeAll(async () => {
      w = await startExecutionWorld('api');
      targetId = await w.createTarget({ deduplicates: true });
      other = await w.t.createTenant('other');
    });
    afterAll(() => w.close());

    it('a dry run over a DST fold and gap in two zones answers the exact instants, UTC and local', async () => {
      const newYork = await cron({
        cron: '30 1,2 * * *',
        timezone: 'America/New_York',
        dstPolicy: { nonexistent: 'skip', repeated: 'both' },
      });
      const berlin = await cron({
        cron: '30 2 * * *',
        timezone: 'Europe/Berlin',
        dstPolicy: { nonexistent: 'shift_forward', repeated: 'last' },
      });
      const around = (day: string) => (i: Instant) => i.local.startsWith(day);
      const plan = async (scheduleId: string) => {
        const res = await backfill(
          scheduleId,
          { from: '2026-03-01T00:00:00Z', to: '2026-11-30T00:00:00Z', dryRun: true },
          null,
        );
        expect(res.status).toBe(200);
        return res.body.instants as Instant[];
      };
      const ny = await plan(newYork);
      const show = (list: Instant[]) => list.map((i) => `${i.at} ${i.local} ${i.action}`);
      // Spring forward (2026-03-08): 02:30 does not exist and is skipped.
      expect(show(ny.filter(around('2026-03-08')))).toEqual([
        '2026-03-08T06:30:00.000Z 2026-03-08T01:30:00-05:00 run',
      ]);
      // Fall back (2026-11-01): 01:30 happens twice and runs at both instants.
      expect(show(ny.filter(around('2026-11-01')))).toEqual([
        '2026-11-01T05:30:00.000Z 2026-11-01T01:30:00-04:00 run',
        '2026-11-01T06:30:00.000Z 2026-11-01T01:30:00-05:00 run',
        '2026-11-01T07:30:00.000Z 2026-11-01T02:30:00-05:00 run',
      ]);
      const de = await plan(berlin);
      // Spring forward (2026-03-29): 02:30 is shifted to the end of the gap, 03:00 CEST.
      expect(show(de.filter(around('2026-03-29')))).toEqual([
        '2026-03-29T01:00:00.000Z 2026-03-29T03:00:00+02:00 run',
      ]);
      // Fall back (2026-10-25): the last 02:30 (CET).
      expect(show(de.filter(around('2026-10-25')))).toEqual([
        '2026-10-25T01:30:00.000Z 2026-10-25T02:30:00+01:00 run',
      ]);
      expect(de).toHaveLength(274);
      // Nothing was written.
      expect(await count('backfills')).toBe(0);
      expect(await count(`occurrences WHERE trigger = 'backfill'`)).toBe(0);

      // The real one creates runs at exactly those instants, with their local times.
      const created = await backfill(berlin, {
        from: '2026-03-29T00:00:00Z',
        to: '2026-03-29T23:00:00Z',
      });
      expect(created.status).toBe(201);
      const [run] = await eventually(async () => {
        const rows = await w.db.query(
          `SELECT scheduled_at, scheduled_local, trigger, origin_key FROM occurrences WHERE schedule_id = $1`,
          [berlin],
        );
        expect(rows).toHaveLength(1);
        return rows;
      });
      expect(run).toEqual({
        scheduled_at: new Date('2026-03-29T01:00:00.000Z'),
        scheduled_local: '2026-03-29T03:00:00+02:00',
        trigger: 'backfill',
        origin_key: created.body.id,
      });
    });

    it('says what happens to each instant: missing, failed and all, and never doubles an active run', async () => {
      const schedule = await cron();
      const day = (n: number) => new Date(Date.UTC(2026, 5, n, 9));
      const failed = await w.insertRun(schedule, day(2), { publish: true });
      const claim = await w.auth(w.t.http.post(`/runs/${failed}/claim`));
      await w
        .auth(w.t.http.post(`/runs/${failed}/complete`))
        .send({ fencingToken: claim.body.fencingToken, outcome: 'failed', retryable: false });
      await w.insertRun(schedule, day(3)); // still QUEUED: active
      const actions = async (reprocess: string) => {
        const res = await backfill(
          schedule,
          { from: day(1).toISOString(), to: day(4).toISOString(), reprocess, dryRun: true },
          null,
        );
        return res.body.instants.map((i: Instant) => i.action);
      };
      expect(await actions('missing')).toEqual(['run', 'skip_existing', 'skip_active', 'run']);
      expect(await actions('failed')).toEqual(['run', 'rerun', 'skip_active', 'run']);
      expect(await actions('all')).toEqual(['run', 'rerun', 'skip_active', 'run']);
    });

    it('is idempotent by key: the same body answers the same backfill, another body is a 422', async () => {
      const schedule = await cron();
      const key = randomUUID();
      const body = { from: '2026-01-01T00:00:00Z', to: '2026-01-03T12:00:00Z' };
      const first = await backfill(schedule, body, key);
      expect(first.status).toBe(201);
      const again = await backfill(schedule, body, key);
      expect(again.status).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.id).toBe(first.body.id);
      const different = await backfill(schedule, { ...body, reprocess: 'all' }, key);
      expect(different.status).toBe(422);
      expect(await count(`backfills WHERE schedule_id = '${schedule}'`)).toBe(1);
      // Concurrent requests with one key create one backfill.
      const racing = randomUUID();
      const both = await Promise.all([
        backfill(schedule, body, racing),
        backfill(schedule, body, racing),
      ]);
      expect(both[0].body.id).toBe(both[1].body.id);
    });

    it('goes through admission and keeps at most maxConcurrent runs in flight, with progress', async () => {
      // A tenant that affords one run at a time.
      const narrow = await w.t.createTenant('narrow', { maxConcurrentRuns: 1 });
      const narrowTarget = await w.createTarget({ apiKey: narrow.apiKey });
      const schedule = await w.createSchedule(
        narrowTarget,
        { runAt: undefined, cron: '0 * * * *', timezone: 'UTC' },
        narrow.apiKey,
      );
      const res = await backfill(
        schedule,
        {
          from: '2026-02-01T00:00:00Z',
          to: '2026-02-01T04:00:00Z',
          overlapPolicy: 'allow',
          maxConcurrent: 3,
          order: 'newest',
        },
        randomUUID(),
        narrow.apiKey,
      );
      expect(res.status).toBe(201);
      const id = res.body.id;
      expect(res.body).toMatchObject({ status: 'running', total: 5, plan: { run: 5 } });
      await eventually(async () =>
        expect((await w.auth(w.t.http.get(`/backfills/${id}`), narrow.apiKey)).body.created).toBe(
          3,
        ),
      );
      await advance(id); // no room: still three
      const runs = async () =>
        w.db.query(
          `SELECT id, scheduled_at, state, reason, admitted_at IS NOT NULL AS admitted, start_deadline
             FROM occurrences WHERE origin_key = $1 ORDER BY scheduled_at DESC`,
          [id],
        );
      let rows = await runs();
      expect(
        rows.map((r: { scheduled_at: Date }) => r.scheduled_at.toISOString().slice(11, 13)),
      ).toEqual(['04', '03', '02']);
      // The tenant affords one run at a time (maxConcurrentRuns 1): the others wait for it.
      expect(rows.filter((r: { admitted: boolean }) => r.admitted)).toHaveLength(1);
      expect(
        rows.filter((r: { reason: string }) => r.reason === 'throttled_concurrency'),
      ).toHaveLength(2);
      expect(rows.every((r: { start_deadline: Date | null }) => r.start_deadline === null)).toBe(
        true,
      );
      // Finish them as a worker would; the backfill moves on, newest first.
      for (let round = 0; round < 10; round++) {
        rows = await runs();
        // The admitted one first: the others wait for its permit, and a claim admits them then.
        const queued = rows.filter((r: { state: string }) => r.state === 'QUEUED');
        const next = queued.find((r: { admitted: boolean }) => r.admitted) ?? queued[0];
        if (!next) break;
        const claim = await w.auth(w.t.http.post(`/runs/${next.id}/claim`), narrow.apiKey);
        expect(claim.status).toBe(200);
        await w
          .auth(w.t.http.post(`/runs/${next.id}/complete`), narrow.apiKey)
          .send({ fencingToken: claim.body.fencingToken, outcome: 'succeeded' });
        await advance(id);
      }
      const done = await w.auth(w.t.http.get(`/backfills/${id}`), narrow.apiKey);
      expect(done.body).toMatchObject({
        status: 'completed',
        processed: 5,
        created: 5,
        runs: { SUCCEEDED: 5 },
      });
    });

    it('a cancel stops it: pending instants are recorded cancelled, unfinished runs cancelled', async () => {
      const schedule = await cron({ cron: '0 * * * *' });
      const res = await backfill(schedule, {
        from: '2026-02-02T00:00:00Z',
        to: '2026-02-02T04:00:00Z',
      });
      await eventually(async () =>
        expect((await w.auth(w.t.http.get(`/backfills/${res.body.id}`))).body.created).toBe(1),
      );
      const cancelled = await w.auth(w.t.http.post(`/backfills/${res.body.id}/cancel`));
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        status: 'cancelled',
        created: 1,
        skipped: 4,
        runs: { CANCELLED: 1 },
      });
      expect(await advance(res.body.id)).toBe(0);
      expect((await w.auth(w.t.http.post(`/backfills/${res.body.id}/cancel`))).status).toBe(409);
    });

    it.each<[string, object, number]>([
      ['to in the future', { from: '2026-01-01T00:00:00Z', to: '2099-01-01T00:00:00Z' }, 400],
      ['from after to', { from: '2026-01-02T00:00:00Z', to: '2026-01-01T00:00:00Z' }, 400],
      [
        'more than 10,000 instants',
        { from: '2000-01-01T00:00:00Z', to: '2026-01-01T00:00:00Z' },
        400,
      ],
      [
        'allow on a schedule that does not allow overlap',
        { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', overlapPolicy: 'allow' },
        400,
      ],
      [
        'maxConcurrent above 1 without allow',
        { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', maxConcurrent: 2 },
        400,
      ],
      [
        'maxConcurrent above 100',
        { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', maxConcurrent: 101 },
        400,
      ],
      [
        'an unknown reprocess mode',
        { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z', reprocess: 'some' },
        400,
      ],
      ['a malformed instant', { from: 'yesterday', to: '2026-01-02T00:00:00Z' }, 400],
    ])('refuses %s and writes nothing', async (_name, body, status) => {
      const schedule = await cron({ cron: '* * * * *', overlapPolicy: 'skip' });
      const before = await count('backfills');
      const res = await backfill(schedule, body);
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(await count('backfills')).toBe(before);
    });

    it('refuses a one-time schedule, a missing key, another tenant and a cancelled schedule', async () => {
      const body = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };
      const once = await w.createSchedule(targetId);
      expect((await backfill(once, body)).status).toBe(400);
      const schedule = await cron();
      expect((await backfill(schedule, body, null)).status).toBe(400);
      expect((await backfill(schedule, body, randomUUID(), other.apiKey)).status).toBe(404);
      expect((await backfill(randomUUID(), body)).status).toBe(404);
      await w.auth(w.t.http.delete(`/schedules/${schedule}`));
      expect((await backfill(schedule, body)).status).toBe(409);
      expect(await count(`backfills WHERE schedule_id IN ('${once}', '${schedule}')`)).toBe(0);
    });
  });

  describe('beside the live schedule (poller, relay and worker running)', () => {
    let w: ExecutionWorld;

    beforeAll(async () => {
      w = await startExecutionWorld('api,poller,relay,worker', {
        RELAY_BACKFILL_INTERVAL_MS: '100',
      });
    });
    afterAll(() => w.close());

    it('a backfill and the live schedule hitting the same instants: distinct identities, each instant once per origin', async () => {
      const targetId = await w.createTarget({ deduplicates: true });
      w.sink.behave(() => ({ status: 200 }));
      const schedule = await w.createSchedule(targetId, {
        runAt: undefined,
        cron: '* * * * * *',
        timezone: 'UTC',
        overlapPolicy: 'allow',
      });
      const startedAt = Date.now();
      // Let the live schedule run a few of its instants.
      await eventually(async () => {
        const [{ n }] = await w.db.query(
          `SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1 AND state = 'SUCCEEDED'`,
          [schedule],
        );
        expect(n).toBeGreaterThanOrEqual(3);
      });
      const from = new Date(startedAt - 3000);
      const to = new Date();
      for (const reprocess of ['missing', 'all']) {
        const res = await w
          .auth(w.t.http.post(`/schedules/${schedule}/backfills`))
          .set('Idempotency-Key', randomUUID())
          .send({
            from: from.toISOString(),
            to: to.toISOString(),
            reprocess,
            overlapPolicy: 'allow',
            maxConcurrent: 5,
          });
        expect(res.status).toBe(201);
        // The instants the poller is still to reach are left to it.
        expect(
          res.body.plan.left_to_schedule +
            res.body.plan.run +
            res.body.plan.rerun +
            res.body.plan.skip_existing +
            res.body.plan.skip_active,
        ).toBeGreaterThan(0);
        await eventually(
          async () => {
            const b = await w.auth(w.t.http.get(`/backfills/${res.body.id}`));
            expect(b.body.status).toBe('completed');
            expect(b.body.runs.SUCCEEDED ?? 0).toBe(b.body.created);
          },
          { timeoutMs: 20_000 },
        );
      }
      const rows: Array<{ at: Date; origin: string; trigger: string; n: number }> =
        await w.db.query(
          `SELECT scheduled_at AS at, origin_key AS origin, trigger, count(*)::int AS n
           FROM occurrences WHERE schedule_id = $1 AND scheduled_at BETWEEN $2 AND $3 AND state <> 'SKIPPED'
          GROUP BY 1, 2, 3`,
          [schedule, from, to],
        );
      // One run per instant and origin; an instant run by the schedule and by the second (all)
      // backfill has both, side by side.
      expect(rows.every((r) => r.n === 1)).toBe(true);
      const byInstant = new Map<number, string[]>();
      for (const r of rows)
        byInstant.set(r.at.getTime(), [...(byInstant.get(r.at.getTime()) ?? []), r.trigger]);
      const shared = [...byInstant.values()].filter(
        (triggers) => triggers.includes('schedule') && triggers.includes('backfill'),
      );
      expect(shared.length).toBeGreaterThan(0);
      // The first (missing) backfill only ran instants from before the schedule existed.
      const [{ early }] = await w.db.query(
        `SELECT count(*)::int AS early FROM occurrences o JOIN backfills b ON b.id::text = o.origin_key
          WHERE b.schedule_id = $1 AND b.reprocess = 'missing'
            AND EXISTS (SELECT 1 FROM occurrences s WHERE s.schedule_id = $1 AND s.origin_key = ''
                          AND s.scheduled_at = o.scheduled_at AND s.state <> 'SKIPPED')`,
        [schedule],
      );
      expect(early).toBe(0);
      // Every delivery of a backfilled run is its own logical run (its own id as Idempotency-Key).
      const backfilled = await w.db.query(
        `SELECT id FROM occurrences WHERE schedule_id = $1 AND trigger = 'backfill'`,
        [schedule],
      );
      for (const { id } of backfilled) expect(w.sink.forRun(id).length).toBeGreaterThanOrEqual(1);
    });
  });
});
