import { DataSource } from 'typeorm';
import { Transactions } from '../../src/database';
import { DueIndexRepository, SHARD_COUNT } from '../../src/due-index';
import { eventually } from '../support/eventually';
import { oneTimeSchedulesAt, tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i);

async function untilDatabaseClockPasses(db: DataSource, instant: Date): Promise<void> {
  await eventually(
    async () => {
      const [{ due }] = await db.query(`SELECT clock_timestamp() > $1::timestamptz AS due`, [
        instant,
      ]);
      expect(due).toBe(true);
    },
    { timeoutMs: 15_000, intervalMs: 50 },
  );
}

/**
 * A backlog of one tenant's entries due at one instant must not hold back another tenant's entry
 * that falls due after it: while full batches drain the backlog oldest first, the poller's fresh
 * lane takes what fell due after the backlog's instant in transactions of its own.
 */
describe('due index: entries that fall due beside a backlog are served at once', () => {
  describe('the claims', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({ ROLES: 'api' }); // no poller: the test claims the entries itself
    });
    afterAll(() => t.close());

    it("takes a quiet tenant's newly due entry beside a backlog batch that is still open", async () => {
      const flooding = await tenantWithTarget(t);
      const quiet = await tenantWithTarget(t);
      const floodAt = new Date(Date.now() + 2000);
      await oneTimeSchedulesAt(t, flooding, 800, floodAt);
      const late = await quiet.createSchedule({
        runAt: new Date(floodAt.getTime() + 500).toISOString(),
      });
      const db = t.app.get(DataSource);
      await untilDatabaseClockPasses(db, new Date(floodAt.getTime() + 600));
      const dueIndex = t.app.get(DueIndexRepository);
      const transactions = t.app.get(Transactions);
      let releaseBacklog!: () => void;
      const backlogHeld = new Promise<void>((resolve) => (releaseBacklog = resolve));
      let backlogClaimed!: (ids: { ids: string[]; last: string }) => void;
      const claimedBacklog = new Promise<{ ids: string[]; last: string }>(
        (resolve) => (backlogClaimed = resolve),
      );
      // The backlog's batch stays open (its entries locked) while the fresh lane claims.
      const backlog = transactions.run(async (tx) => {
        const batch = await dueIndex.claimDue(tx, ALL_SHARDS, 500, 0);
        backlogClaimed({
          ids: batch.entries.map((e) => e.scheduleId),
          last: batch.entries.at(-1)!.dueAtExact,
        });
        await backlogHeld;
      });
      const { ids: backlogIds, last } = await claimedBacklog;
      expect(backlogIds).toHaveLength(500);
      expect(backlogIds).not.toContain(late.id);
      // The lane's look between rounds: due now past the backlog's instant, nothing past its own.
      expect(await dueIndex.nextFreshDueInMs(ALL_SHARDS, last)).toBe(0);
      const lateExact = (
        await db.query(`SELECT due_at::text AS at FROM due_index WHERE schedule_id = $1`, [late.id])
      )[0].at;
      expect(await dueIndex.nextFreshDueInMs(ALL_SHARDS, lateExact)).toBeNull();
      const fresh = await transactions.run((tx) =>
        dueIndex.claimFresh(tx, ALL_SHARDS, last, 100, 0),
      );
      const [{ now }] = await db.query(`SELECT now() AS now`);
      releaseBacklog();
      await backlog;
      // Only what fell due after the backlog's instant: the quiet entry, not the other 300
      // entries of the flood, which the backlog's next batch takes.
      expect(fresh.entries.map((e) => e.scheduleId)).toEqual([late.id]);
      // Due already: the horizon is the claim's own clock, nothing to wait for.
      expect(fresh.horizon!.at.getTime()).toBeGreaterThan(floodAt.getTime() + 500);
      expect(fresh.horizon!.at.getTime()).toBeLessThanOrEqual(new Date(now).getTime());
    });

    it('takes the next instant past the floor within the lookahead, leaving one a batch waits for', async () => {
      const flooding = await tenantWithTarget(t);
      const quiet = await tenantWithTarget(t);
      const floodAt = new Date(Date.now() + 1500);
      await oneTimeSchedulesAt(t, flooding, 200, floodAt);
      const db = t.app.get(DataSource);
      await untilDatabaseClockPasses(db, floodAt);
      const soon = await quiet.createSchedule({
        runAt: new Date(Date.now() + 3000).toISOString(),
      });
      const later = await quiet.createSchedule({
        runAt: new Date(Date.now() + 3500).toISOString(),
      });
      const exactOf = async (id: string): Promise<string> =>
        (await db.query(`SELECT due_at::text AS at FROM due_index WHERE schedule_id = $1`, [id]))[0]
          .at;
      const [floor, soonAt, laterAt] = [
        (
          await db.query(`SELECT max(due_at)::text AS at FROM due_index WHERE tenant_id = $1`, [
            flooding.tenant.id,
          ])
        )[0].at as string,
        await exactOf(soon.id),
        await exactOf(later.id),
      ];
      const dueIndex = t.app.get(DueIndexRepository);
      const transactions = t.app.get(Transactions);
      const claim = (lookaheadMs: number, prepared: string | null = null) =>
        transactions.run((tx) =>
          dueIndex.claimFresh(tx, ALL_SHARDS, floor, 100, lookaheadMs, prepared),
        );
      // Out of reach of a short lookahead: nothing, and the flood at the floor is never taken.
      expect((await claim(100)).entries).toEqual([]);
      // Within reach: the earliest instant only, with that instant as the horizon to commit at.
      const ahead = await claim(10_000);
      expect(ahead.entries.map((e) => e.scheduleId)).toEqual([soon.id]);
      expect(ahead.horizon?.exact).toBe(soonAt);
      // A batch waits for that instant: the next one looks past it, and so does the look.
      const next = await claim(10_000, soonAt);
      expect(next.entries.map((e) => e.scheduleId)).toEqual([later.id]);
      expect(next.horizon?.exact).toBe(laterAt);
      const inMs = await dueIndex.nextFreshDueInMs(ALL_SHARDS, floor, soonAt);
      expect(inMs).toBeGreaterThan(2000);
      expect(inMs).toBeLessThanOrEqual(3500);
      expect(await dueIndex.nextFreshDueInMs(ALL_SHARDS, floor, laterAt)).toBeNull();
    });
  });

  describe('the poller', () => {
    let t: TestApp;

    beforeAll(async () => {
      // Small batches: the flood's 3,000 entries take many transactions, one after another.
      t = await startTestApp({ ROLES: 'api,poller', POLLER_BATCH_SIZE: '50' });
    });
    afterAll(() => t.close());

    it("dispatches a quiet tenant's run while a flood of one instant is still being dispatched", async () => {
      const flooding = await tenantWithTarget(t, {
        dispatchRatePerSecond: 1000,
        maxConcurrentRuns: 5,
      });
      const quiet = await tenantWithTarget(t);
      const floodAt = new Date(Date.now() + 4000);
      await oneTimeSchedulesAt(t, flooding, 3000, floodAt);
      const late = await quiet.createSchedule({
        runAt: new Date(floodAt.getTime() + 100).toISOString(),
      });
      const db = t.app.get(DataSource);
      await eventually(
        async () => {
          const [{ n }] = await db.query(
            `SELECT count(*)::int AS n FROM occurrences WHERE tenant_id = $1`,
            [flooding.tenant.id],
          );
          expect(n).toBe(3000);
        },
        { timeoutMs: 30_000, intervalMs: 100 },
      );
      const [{ quietCreated, floodDone }] = await db.query(
        `SELECT (SELECT created_at FROM occurrences WHERE schedule_id = $1) AS "quietCreated",
                (SELECT max(created_at) FROM occurrences WHERE tenant_id = $2) AS "floodDone"`,
        [late.id, flooding.tenant.id],
      );
      // Oldest first alone, the quiet entry would have waited for all 60 batches of the flood.
      expect(quietCreated).not.toBeNull();
      expect(new Date(quietCreated).getTime()).toBeLessThan(new Date(floodDone).getTime());
      expect(new Date(quietCreated).getTime()).toBeGreaterThanOrEqual(floodAt.getTime() + 100);
    });
  });
});
