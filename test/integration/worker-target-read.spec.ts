import { randomUUID } from 'node:crypto';
import { AdmissionService } from '../../src/admission';
import { SqlRunner } from '../../src/database';
import { OccurrencesService, type NewOccurrence } from '../../src/occurrences';
import { TargetsService } from '../../src/targets';
import { eventually } from '../support/eventually';
import { ExecutionWorld, FAST_RETRIES, startExecutionWorld } from './execution.fixtures';

/**
 * The worker reads the targets its jobs name (RunJob.targetId) while it claims their runs, so an
 * attempt starts as soon as its claim returns; the claim still decides which target is called.
 */
describe('worker: the targets a batch names are read beside its claims', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,worker,relay');
  });
  afterEach(() => jest.restoreAllMocks());
  afterAll(() => w.close());

  /** A target on the sink at its own path, so a request tells which target it was sent for. */
  async function targetAt(path: string): Promise<string> {
    const res = await w
      .auth(w.t.http.post('/targets'))
      .send({ name: `target-${randomUUID()}`, url: w.sink.url(path), timeoutMs: 5000 });
    if (res.status !== 201) throw new Error(`target: ${res.status} ${res.text}`);
    return res.body.id;
  }

  const succeeded = (runId: string) =>
    eventually(async () => {
      const run = await w.run(runId);
      expect(run.state).toBe('SUCCEEDED');
      return run;
    });

  it("starts reading a dispatched run's target before its claim has returned", async () => {
    const events: string[] = [];
    const targets = w.t.app.get(TargetsService);
    const admission = w.t.app.get(AdmissionService);
    const read = targets.getForDispatch.bind(targets);
    const claimBatch = admission.claimBatch.bind(admission);
    jest.spyOn(targets, 'getForDispatch').mockImplementation((refs) => {
      events.push('targets read');
      return read(refs);
    });
    jest.spyOn(admission, 'claimBatch').mockImplementation(async (runs, workerId) => {
      const claims = await claimBatch(runs, workerId);
      if (claims.length > 0) events.push('claimed');
      return claims;
    });
    const target = await targetAt('/early');
    const schedule = await w.createSchedule(target, {
      runAt: new Date(Date.now() + 2000).toISOString(),
    });
    const [run] = (await eventually(async () => {
      const res = await w.auth(w.t.http.get(`/schedules/${schedule}/runs`));
      expect(res.body.items).toHaveLength(1);
      return res.body.items;
    })) as Array<{ id: string }>;
    await succeeded(run.id);
    expect(w.sink.forRun(run.id).map((req) => req.path)).toEqual(['/early']);
    // Before this change the read followed the claim ('claimed' came first). A claim that was
    // refused and retried (its job fetched again) reads again: only the order matters.
    expect(events).toContain('claimed');
    expect(events.indexOf('targets read')).toBeGreaterThanOrEqual(0);
    expect(events.indexOf('targets read')).toBeLessThan(events.indexOf('claimed'));
  });

  it('calls the target its schedule has at the claim, not the one its job named', async () => {
    const before = await targetAt('/before');
    const now = await targetAt('/now');
    const schedule = await w.createSchedule(now);
    const sql = w.t.app.get(SqlRunner);
    const admission = w.t.app.get(AdmissionService);
    const runId = await sql.transaction(async (tx) => {
      const run: NewOccurrence = {
        tenantId: w.tenant.id,
        scheduleId: schedule,
        revision: 1,
        scheduledAt: new Date(),
        scheduledLocal: new Date().toISOString(),
        state: 'QUEUED',
        reason: null,
        trigger: 'schedule',
        maxAttempts: FAST_RETRIES.maxAttempts,
        retryDeadlineSeconds: FAST_RETRIES.retryDeadlineSeconds,
        priority: 'normal',
        startDeadlineSeconds: null,
      };
      await admission.decideNew(tx, [run]);
      const [inserted] = await w.t.app.get(OccurrencesService).insert(tx, [run]);
      // Its job names the schedule's former target, as a job published before an edit would.
      await admission.admitted(tx, [
        {
          runId: inserted.id,
          tenantId: w.tenant.id,
          scheduledAt: inserted.scheduledAt,
          targetId: before,
        },
      ]);
      return inserted.id;
    });
    await succeeded(runId);
    expect(w.sink.forRun(runId).map((req) => req.path)).toEqual(['/now']);
  });
});
