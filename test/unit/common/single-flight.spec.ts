import { SingleFlight } from '../../../src/common';

describe('SingleFlight', () => {
  /** A lookup whose answer the test gives when it wants, counting how often it was started. */
  function controlledLookup<V>() {
    let calls = 0;
    const settle: Array<{ resolve: (v: V) => void; reject: (e: Error) => void }> = [];
    const lookup = () => {
      calls++;
      return new Promise<V>((resolve, reject) => settle.push({ resolve, reject }));
    };
    return { lookup, calls: () => calls, settle };
  }

  it('gives callers who ask while a lookup of their key is in flight that lookup', async () => {
    const flights = new SingleFlight<string, number>();
    const a = controlledLookup<number>();
    const answers = Promise.all([1, 2, 3].map(() => flights.run('k', a.lookup)));
    expect(a.calls()).toBe(1);
    expect(flights.size).toBe(1);
    a.settle[0].resolve(42);
    expect(await answers).toEqual([42, 42, 42]);
  });

  it('keeps nothing once a lookup settles: the next caller starts a new one', async () => {
    const flights = new SingleFlight<string, number>();
    const a = controlledLookup<number>();
    const first = flights.run('k', a.lookup);
    a.settle[0].resolve(1);
    expect(await first).toBe(1);
    expect(flights.size).toBe(0);
    const second = flights.run('k', a.lookup);
    expect(a.calls()).toBe(2);
    a.settle[1].resolve(2);
    expect(await second).toBe(2);
  });

  it('keeps keys apart and shares a failure with the callers of its key only', async () => {
    const flights = new SingleFlight<string, number>();
    const a = controlledLookup<number>();
    const failing = [flights.run('a', a.lookup), flights.run('a', a.lookup)];
    const other = flights.run('b', a.lookup);
    expect(a.calls()).toBe(2);
    a.settle[0].reject(new Error('database gone'));
    a.settle[1].resolve(7);
    for (const call of failing) await expect(call).rejects.toThrow('database gone');
    expect(await other).toBe(7);
    expect(flights.size).toBe(0);
  });
});
