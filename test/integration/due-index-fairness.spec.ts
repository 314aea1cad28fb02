import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { Transactions } from '../../src/database';
import { DueIndexRepository, SHARD_COUNT } from '../../src/due-index';
import { eventually } from '../support/eventually';
import { tenantWithTarget } from '../support/scheduling';
import { startTestApp, TestApp } from '../support/test-app';

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i);

/**
 * A backlog of one tenant's entries due at one instant must not hold back another tenant's entry
 * that falls due after it: a full batch also takes the freshest due entries.
 */
describe('due index: the freshest due entries are served beside a backlog', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api' }); // no poller: the test claims the entries itself
  });
  afterAll(() => t.close());

  it("takes a quiet tenant's newly due entry in the first batch, not after the flood", async () => {
    const flood = await tenantWithTarget(t);
    const quiet = await tenantWithTarget(t);
    const floodAt = new Date(Date.now() + 2000);
    const res = await t.http
      .post('/schedules/batch')
      .set('Authorization', `Bearer ${flood.tenant.apiKey}`)
      .send({
        items: Array.from({ length: 800 }, (_, i) => ({
          idempotencyKey: randomUUID(),
          schedule: { name: `f${i}`, targetId: flood.targetId, runAt: floodAt.toISOString() },
        })),
      });
    expect(res.status).toBe(200);
    const late = await quiet.createSchedule({
      runAt: new Date(floodAt.getTime() + 500).toISOString(),
    });
    const db = t.app.get(DataSource);
    await eventually(
      async () => {
        const [{ due }] = await db.query(`SELECT clock_timestamp() > $1::timestamptz AS due`, [
          new Date(floodAt.getTime() + 600),
        ]);
        expect(due).toBe(true);
      },
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const batch = await t.app
      .get(Transactions)
      .run((tx) => t.app.get(DueIndexRepository).claimDue(tx, ALL_SHARDS, 500, 0));
    const ids = batch.entries.map((e) => e.scheduleId);
    expect(ids).toContain(late.id);
    // The backlog still moves: the oldest-first part is a whole batch.
    expect(ids.length).toBeGreaterThanOrEqual(500);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
