import { eventually } from '../support/eventually';
import { startTestApp, TestApp } from '../support/test-app';
import { ExecutionWorld, startExecutionWorld, runEngine } from './execution.fixtures';

/** dispatchRatePerSecond is one bucket per tenant in the database, shared by every replica. */
describe("a tenant's dispatch rate", () => {
  let w: ExecutionWorld;
  let replica: TestApp;

  beforeAll(async () => {
    w = await startExecutionWorld('api', {}, { dispatchRatePerSecond: 1, maxConcurrentRuns: 100 });
    replica = await startTestApp({ ROLES: 'api' }, { database: w.t.database });
  });
  afterAll(async () => {
    await replica.close();
    await w.close();
  });

  it('admits at most one second of burst across replicas, keeps the rest QUEUED with the reason, refills', async () => {
    const targetId = await w.createTarget();
    const scheduleId = await w.createSchedule(targetId, { overlapPolicy: 'allow' });
    const due = new Date(Date.now() - 1000);
    const runIds = [];
    for (let i = 0; i < 6; i++)
      runIds.push(await w.insertRun(scheduleId, new Date(due.getTime() - i)));
    const engines = [runEngine(w.t.app), runEngine(replica.app)];
    const startedAt = Date.now();
    const results = await Promise.all(
      runIds.map((runId, i) =>
        engines[i % 2].claim(w.tenant.id, runId, `worker-${i}`, { requeue: true }),
      ),
    );
    const elapsedSeconds = (Date.now() - startedAt) / 1000;
    const claimed = results.filter((r) => r.claimed);
    const limited = results.filter((r) => !r.claimed && r.reason === 'throttled_rate');
    // A full bucket holds one second (one token at 1/s); a busy host that spreads the six claims
    // over more than a second lets the refill admit one more per second elapsed, never all six.
    const allowed = 1 + Math.floor(elapsedSeconds);
    expect(claimed.length).toBeGreaterThanOrEqual(1);
    expect(claimed.length).toBeLessThanOrEqual(Math.min(allowed, 5));
    expect(limited).toHaveLength(6 - claimed.length);
    // They wait in the ledger for the admitter: no job comes back for them.
    for (const r of limited) if (!r.claimed) expect(r.requeuedInMs).toBeNull();
    const waiting = await w.db.query(
      `SELECT reason FROM occurrences WHERE id = ANY($1::uuid[]) AND state = 'QUEUED'`,
      [runIds],
    );
    expect(waiting).toHaveLength(limited.length);
    for (const row of waiting) expect(row.reason).toBe('throttled_rate');
    // Tokens come back at 1/s: within a second or so another claim goes through.
    const rest = runIds.filter((_, i) => !results[i].claimed);
    await eventually(
      async () => {
        const again = await engines[0].claim(w.tenant.id, rest[0], 'worker-late');
        expect(again.claimed).toBe(true);
      },
      { timeoutMs: 3000, intervalMs: 100 },
    );
  });
});
