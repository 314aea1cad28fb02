import { eventually } from '../support/eventually';
import { startTestApp, TestApp } from '../support/test-app';
import { ExecutionWorld, startExecutionWorld, runEngine } from './execution.fixtures';

/** dispatchRatePerSecond is one bucket per tenant in the database, shared by every replica. */
describe("a tenant's dispatch rate", () => {
  let w: ExecutionWorld;
  let replica: TestApp;

  beforeAll(async () => {
    w = await startExecutionWorld('api', {}, { dispatchRatePerSecond: 2, maxConcurrentRuns: 100 });
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
    const results = await Promise.all(
      runIds.map((runId, i) =>
        engines[i % 2].claim(w.tenant.id, runId, `worker-${i}`, { requeue: true }),
      ),
    );
    const claimed = results.filter((r) => r.claimed);
    const limited = results.filter((r) => !r.claimed && r.reason === 'throttled_rate');
    expect(claimed).toHaveLength(2);
    expect(limited).toHaveLength(4);
    // They wait in the ledger for the admitter: no job comes back for them.
    for (const r of limited) if (!r.claimed) expect(r.requeuedInMs).toBeNull();
    const waiting = await w.db.query(
      `SELECT reason FROM occurrences WHERE id = ANY($1::uuid[]) AND state = 'QUEUED'`,
      [runIds],
    );
    expect(waiting).toHaveLength(4);
    for (const row of waiting) expect(row.reason).toBe('throttled_rate');
    // Tokens come back at 2/s: within a second another claim goes through.
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
