import type { DispatchResult } from '../../../src/poller';
import { FreshLane, type FreshLaneDispatch } from '../../../src/poller/fresh-lane';

const served = (entries: number): DispatchResult => ({
  entries,
  lastDueAtExact: null,
  dropped: 0,
  created: [],
  published: 0,
  now: new Date(0),
});

/** A dispatch that answers its looks from a script and records what the lane asked. */
function scripted(looks: Array<number | null>, entriesServed = 1) {
  const calls: string[] = [];
  let lookedAll!: () => void;
  const done = new Promise<void>((resolve) => (lookedAll = resolve));
  const dispatch: FreshLaneDispatch = {
    nextDueInMs: async (after) => {
      calls.push(`look ${after}`);
      if (looks.length === 0) lookedAll();
      return looks.length > 0 ? looks.shift()! : null;
    },
    serve: async (after) => {
      calls.push(`serve ${after}`);
      return served(entriesServed);
    },
  };
  return { calls, dispatch, done };
}

describe('FreshLane', () => {
  it('serves only when its next entry is due, sleeping until then, past the latest floor', async () => {
    const s = scripted([5, 0, null]);
    const failures: unknown[] = [];
    const lane = new FreshLane(s.dispatch, (e) => failures.push(e));
    lane.follow('t1');
    await new Promise((resolve) => setTimeout(resolve, 2));
    lane.follow('t2'); // the backlog moved on while the lane slept
    await s.done;
    await lane.stop();
    expect(s.calls).toEqual(['look t1', 'look t2', 'serve t2', 'look t2', 'look t2']);
    expect(failures).toEqual([]);
  });

  it('one loop whatever the number of full batches, and it ends with stop()', async () => {
    const s = scripted([]);
    const lane = new FreshLane(s.dispatch, () => undefined);
    lane.follow('t1');
    lane.follow('t1');
    lane.follow('t1');
    await s.done;
    await lane.stop();
    expect(s.calls).toEqual(['look t1']);
  });

  it('a NOTIFY cuts its sleep short', async () => {
    const s = scripted([60_000, 0]);
    const lane = new FreshLane(s.dispatch, () => undefined);
    lane.follow('t1');
    await new Promise((resolve) => setTimeout(resolve, 5));
    lane.wake();
    await s.done;
    await lane.stop();
    expect(s.calls.slice(0, 3)).toEqual(['look t1', 'look t1', 'serve t1']);
  });

  it('a failed round stops the lane and reports it; the next full batch starts it again', async () => {
    const failures: unknown[] = [];
    let looks = 0;
    const lane = new FreshLane(
      {
        nextDueInMs: async () => {
          looks++;
          if (looks === 1) throw new Error('database away');
          return null;
        },
        serve: async () => served(0),
      },
      (e) => failures.push(e),
    );
    lane.follow('t1');
    await lane.stop();
    expect(failures).toHaveLength(1);
    lane.follow('t2');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await lane.stop();
    expect(looks).toBe(2);
  });
});
