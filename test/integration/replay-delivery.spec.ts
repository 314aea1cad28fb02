import { eventually } from '../support/eventually';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

/** A replay, delivered by the built-in worker, carries its original's Idempotency-Key. */
describe('replay delivery', () => {
  let w: ExecutionWorld;

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker');
  });
  afterAll(async () => {
    await w.close();
  });

  it("sends the original run's id as Idempotency-Key and its own as X-Dueline-Run-Id", async () => {
    const targetId = await w.createTarget({ deduplicates: true });
    const schedule = await w.createSchedule(targetId);
    let calls = 0;
    w.sink.behave(() => (++calls === 1 ? { status: 400, body: { error: 'no' } } : { status: 200 }));
    const original = await w.trigger(schedule);
    await eventually(async () => expect((await w.run(original)).state).toBe('FAILED'));

    const res = await w.auth(w.t.http.post('/runs/replay')).send({ ids: [original] });
    expect(res.status).toBe(202);
    const replayId = await eventually(async () => {
      const items = await w.auth(w.t.http.get(`/bulk-operations/${res.body.id}/items`));
      expect(items.body.items[0].outcome).toBe('replayed');
      return items.body.items[0].resultRunId as string;
    });
    await eventually(async () => expect((await w.run(replayId)).state).toBe('SUCCEEDED'));
    const deliveries = w.sink.requests.map((r) => [
      r.headers['idempotency-key'],
      r.headers['x-dueline-run-id'],
    ]);
    expect(deliveries).toEqual([
      [original, original],
      [original, replayId],
    ]);
  });
});
