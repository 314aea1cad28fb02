import { EventEmitter } from 'node:events';
import { joinPool, type PoolChannel } from '../../../src/worker-pool';

class FakeChannel extends EventEmitter implements PoolChannel {
  connected = true;
  readonly sent: unknown[] = [];
  send = (message: unknown): boolean => {
    this.sent.push(message);
    return true;
  };
}

describe("a worker process's end of the pool", () => {
  it('says it is ready, answers metrics requests, and reports a lost primary', async () => {
    const channel = new FakeChannel();
    const lost = jest.fn();
    joinPool(channel, {
      workerId: 'worker:h:1:abc',
      metrics: () => Promise.resolve([]),
      onPrimaryLost: lost,
      onHandoff: () => undefined,
      reportRoom: () => undefined,
    });
    expect(channel.sent).toEqual([{ kind: 'ready', workerId: 'worker:h:1:abc' }]);

    channel.emit('message', { kind: 'metrics.request', id: 7 });
    channel.emit('message', { kind: 'something else' });
    await new Promise((done) => setImmediate(done));
    expect(channel.sent[1]).toEqual({ kind: 'metrics.reply', id: 7, metrics: [] });
    expect(channel.sent).toHaveLength(2);

    expect(lost).not.toHaveBeenCalled();
    channel.connected = false;
    channel.emit('disconnect');
    expect(lost).toHaveBeenCalledTimes(1);
  });

  it('reports a primary already gone at once', () => {
    const channel = new FakeChannel();
    channel.connected = false;
    const lost = jest.fn();
    const reportRoom = jest.fn();
    joinPool(channel, {
      workerId: 'w',
      metrics: () => Promise.resolve([]),
      onPrimaryLost: lost,
      onHandoff: () => undefined,
      reportRoom,
    });
    expect(lost).toHaveBeenCalledTimes(1);
    expect(channel.sent).toEqual([]);
    expect(reportRoom).not.toHaveBeenCalled();
  });

  it("takes the primary's handoffs and reports its room after saying it is ready", () => {
    const channel = new FakeChannel();
    const handed: unknown[] = [];
    let report: ((room: { high: number; other: number }) => void) | null = null;
    joinPool(channel, {
      workerId: 'w',
      metrics: () => Promise.resolve([]),
      onPrimaryLost: () => undefined,
      onHandoff: (jobs) => handed.push(...jobs),
      reportRoom: (reporter) => (report = reporter),
    });
    const job = { queue: 'dueline-runs', id: 'j1', runs: [{ runId: 'r1', tenantId: 't1' }] };
    channel.emit('message', { kind: 'handoff.jobs', jobs: [job] });
    expect(handed).toEqual([job]);

    report!({ high: 5, other: 4 });
    expect(channel.sent).toEqual([
      { kind: 'ready', workerId: 'w' },
      { kind: 'handoff.room', room: { high: 5, other: 4 } },
    ]);
    // Once the primary is gone, reports have nowhere to go.
    channel.connected = false;
    report!({ high: 6, other: 5 });
    expect(channel.sent).toHaveLength(2);
  });
});
