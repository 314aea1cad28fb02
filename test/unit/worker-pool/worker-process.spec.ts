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
    joinPool(channel, { workerId: 'w', metrics: () => Promise.resolve([]), onPrimaryLost: lost });
    expect(lost).toHaveBeenCalledTimes(1);
    expect(channel.sent).toEqual([]);
  });
});
