import { WorkerSlots } from '../../../src/worker/worker-slots';

/**
 * A worker's one count of slots, which its fetch loops and the runs its poller hands it both
 * take from: WORKER_CONCURRENCY is never exceeded, whoever asks first.
 */
describe('WorkerSlots', () => {
  const slots = (concurrency = 6, reservedHighSharePercent = 0) =>
    new WorkerSlots({ concurrency, reservedHighSharePercent });

  it('keeps the reserved share from the other lane and lets high runs take every slot', () => {
    const s = slots(10, 20);
    expect(s.otherSlots).toBe(8);
    expect(s.room()).toEqual({ high: 10, other: 8 });
    expect(s.tryTake('other', 9)).toBe(false);
    expect(s.tryTake('other', 8)).toBe(true);
    expect(s.room()).toEqual({ high: 2, other: 0 });
    expect(s.tryTake('other', 1)).toBe(false);
    expect(s.tryTake('high', 2)).toBe(true);
    expect(s.room()).toEqual({ high: 0, other: 0 });
    expect(s.inUse()).toBe(10);
    expect(s.inUse('high')).toBe(2);
  });

  it('high runs in the slots outside the share leave the other lane less', () => {
    const s = slots(10, 20);
    expect(s.tryTake('high', 5)).toBe(true);
    expect(s.room()).toEqual({ high: 5, other: 5 });
  });

  it('a free slot seen by two takers goes to one of them (the fetched batch waits)', async () => {
    const s = slots(6);
    // The fetch loop saw room for its batch of two and fetched ...
    await s.whenFree('other', 2);
    // ... while the handoff took the last five slots but one.
    expect(s.tryTake('other', 5)).toBe(true);
    let fetchedTook = false;
    const fetched = s.take('other', 2).then((took) => (fetchedTook = took));
    await new Promise((done) => setImmediate(done));
    expect(fetchedTook).toBe(false);
    expect(s.inUse()).toBe(5);
    s.release('other', 1);
    await fetched;
    expect(fetchedTook).toBe(true);
    expect(s.inUse()).toBe(6);
  });

  it('gives up at the deadline, with nothing taken', async () => {
    const s = slots(2);
    s.tryTake('other', 2);
    const startedAt = Date.now();
    expect(await s.take('other', 1, Date.now() + 30)).toBe(false);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(25);
    expect(s.inUse()).toBe(2);
  });

  it('gives up once abandoned, at the next change', async () => {
    const s = slots(2);
    s.tryTake('other', 2);
    let stopping = false;
    const taking = s.take('other', 2, Infinity, () => stopping);
    stopping = true;
    s.release('other', 1);
    expect(await taking).toBe(false);
    expect(s.inUse()).toBe(1);
  });

  it('takes nothing once abandoned, even with room', async () => {
    const s = slots(2);
    expect(await s.take('other', 1, Infinity, () => true)).toBe(false);
    expect(s.inUse()).toBe(0);
  });

  it('tells its watcher of every change', () => {
    const s = slots(4);
    const seen: number[] = [];
    s.watch(() => seen.push(s.inUse()));
    s.tryTake('high', 3);
    s.release('high', 2);
    s.release('high', 0);
    expect(seen).toEqual([3, 1]);
  });
});
