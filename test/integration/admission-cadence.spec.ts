import { randomUUID } from 'node:crypto';
import { AdmissionService } from '../../src/admission';
import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

/**
 * The admitter's pace (AdmitterCadence): while nothing waits it comes back only every
 * ADMISSION_IDLE_INTERVAL_MS, here a minute, so these tests see what wakes it: a poller beside
 * it that decides runs must wait.
 */
describe('admission: the admitter rests while nothing waits, and wakes for runs made to wait', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,worker,relay', {
      ADMISSION_INTERVAL_MS: '20',
      ADMISSION_IDLE_INTERVAL_MS: '60000',
    });
  });
  afterAll(() => w.close());

  it('takes no round while nothing waits', async () => {
    const admission = w.t.app.get(AdmissionService);
    const rounds = jest.spyOn(admission, 'admitWaiting');
    try {
      await new Promise((done) => setTimeout(done, 1000));
      // At the active pace, about fifty; resting, at most the one it may have been in.
      expect(rounds.mock.calls.length).toBeLessThanOrEqual(1);
    } finally {
      rounds.mockRestore();
    }
  });

  it('admits a throttled flood at its rate all the same: the dispatch that made it wait woke it', async () => {
    const tenant = await w.t.createTenant(`wake-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 100,
      dispatchRatePerSecond: 5,
    });
    const targetId = await w.createTarget({ apiKey: tenant.apiKey });
    const due = new Date(Date.now() + 1500);
    const res = await w.auth(w.t.http.post('/schedules/batch'), tenant.apiKey).send({
      items: Array.from({ length: 15 }, (_, i) => ({
        idempotencyKey: randomUUID(),
        schedule: { name: `wake-${i}`, targetId, runAt: due.toISOString(), overlapPolicy: 'allow' },
      })),
    });
    expect(res.status).toBe(200);
    const schedules = res.body.items.map((item: { schedule: { id: string } }) => item.schedule.id);
    // Five in the bucket at the instant; ten wait for the rate and are admitted over about two
    // seconds. Resting a minute, the admitter would have left the ten waiting.
    const done = await eventually(
      async () => {
        const rows = await w.db.query(
          `SELECT state, admitted_at FROM occurrences WHERE schedule_id = ANY($1::uuid[])`,
          [schedules],
        );
        expect(rows.filter((r: { state: string }) => r.state === 'SUCCEEDED')).toHaveLength(15);
        return rows;
      },
      { timeoutMs: 10_000 },
    );
    const admitted = done.map((r: { admitted_at: Date }) => r.admitted_at.getTime());
    expect(Math.max(...admitted) - Math.min(...admitted)).toBeGreaterThanOrEqual(1500);
  });
});
