import { FreshLane, type FreshLaneDispatch } from '../../../src/poller/fresh-lane';
import { servedBatch } from '../../support/dispatch-results';

const LOOKAHEAD_MS = 100;

/** How one serve behaves: answers at once, or waits for an instant until released. */
type Serving = { entries: number } | { waitsFor: string; full?: boolean; release: Promise<void> };

/** A dispatch that answers from scripts and records what the lane asked. */
function scripted(looks: Array<number | null>, servings: Serving[] = []) {
  const calls: string[] = [];
  let lookedAll!: () => void;
  const done = new Promise<void>((resolve) => (lookedAll = resolve));
  const dispatch: FreshLaneDispatch = {
    nextDueInMs: async (after, prepared) => {
      calls.push(`look ${after}${prepared ? ` past ${prepared}` : ''}`);
      if (looks.length === 0) lookedAll();
      return looks.length > 0 ? looks.shift()! : null;
    },
    serve: async (after, prepared, onWaiting) => {
      calls.push(`serve ${after}${prepared ? ` past ${prepared}` : ''}`);
      const serving = servings.shift() ?? { entries: 1 };
      if ('entries' in serving) return servedBatch(serving.entries);
      onWaiting({ instant: serving.waitsFor, full: serving.full ?? false });
      await serving.release;
      calls.push(`committed ${serving.waitsFor}`);
      return servedBatch(1);
    },
  };
  return { calls, dispatch, done };
}

function released(): { release: Promise<void>; open: () => void } {
  let open!: () => void;
  const release = new Promise<void>((resolve) => (open = resolve));
  return { release, open };
}

const tick = (ms = 2) => new Promise((resolve) => setTimeout(resolve, ms));

describe('FreshLane', () => {
  it('serves when its next entry is within the lookahead, sleeping until then, past the latest floor', async () => {
    const s = scripted([LOOKAHEAD_MS + 5, LOOKAHEAD_MS, null]);
    const failures: unknown[] = [];
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, (e) => failures.push(e));
    lane.follow('t1');
    await tick();
    lane.follow('t2'); // the backlog moved on while the lane slept
    await s.done;
    await lane.stop();
    expect(s.calls).toEqual(['look t1', 'look t2', 'serve t2', 'look t2', 'look t2']);
    expect(failures).toEqual([]);
  });

  it('prepares the next instant beside a batch waiting for its own, and looks past it', async () => {
    const first = released();
    const s = scripted([0, 0, null], [{ waitsFor: 'i1', release: first.release }]);
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, () => undefined);
    lane.follow('t1');
    await tick(5);
    // The first batch still waits for i1: the lane has looked past it and served beside it.
    expect(s.calls).toEqual([
      'look t1',
      'serve t1',
      'look t1 past i1',
      'serve t1 past i1',
      'look t1 past i1',
    ]);
    first.open();
    await s.done;
    await lane.stop();
    // Once i1's batch committed the lane looks from its floor again.
    expect(s.calls.slice(5)).toEqual(['committed i1', 'look t1']);
  });

  it('at most two batches wait at once; a full one is awaited before the next round', async () => {
    const a = released();
    const b = released();
    const full = released();
    const s = scripted(
      [0, 0, 0, 0, null],
      [
        { waitsFor: 'i1', release: a.release },
        { waitsFor: 'i2', release: b.release },
        { waitsFor: 'i3', full: true, release: full.release },
      ],
    );
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, () => undefined);
    lane.follow('t1');
    await tick(5);
    expect(s.calls).toEqual(['look t1', 'serve t1', 'look t1 past i1', 'serve t1 past i1']);
    a.open();
    await tick(5);
    // i1 committed: room for one more; i2 still waits, so the lane looks past it.
    expect(s.calls.slice(4)).toEqual(['committed i1', 'look t1 past i2', 'serve t1 past i2']);
    b.open();
    await tick(5);
    // i3's batch is full: nothing more until it commits.
    expect(s.calls.slice(7)).toEqual(['committed i2']);
    full.open();
    await s.done;
    await lane.stop();
    expect(s.calls.slice(8)).toEqual(['committed i3', 'look t1', 'serve t1', 'look t1', 'look t1']);
  });

  it('one loop whatever the number of full batches, and it ends with stop()', async () => {
    const s = scripted([]);
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, () => undefined);
    lane.follow('t1');
    lane.follow('t1');
    lane.follow('t1');
    await s.done;
    await lane.stop();
    expect(s.calls).toEqual(['look t1']);
  });

  it('a NOTIFY cuts its sleep short', async () => {
    const s = scripted([60_000, 0]);
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, () => undefined);
    lane.follow('t1');
    await tick(5);
    lane.wake();
    await s.done;
    await lane.stop();
    expect(s.calls.slice(0, 3)).toEqual(['look t1', 'look t1', 'serve t1']);
  });

  it('stop() waits for the batches still waiting for their instants', async () => {
    const first = released();
    const s = scripted([0, null], [{ waitsFor: 'i1', release: first.release }]);
    const lane = new FreshLane(s.dispatch, LOOKAHEAD_MS, () => undefined);
    lane.follow('t1');
    await s.done;
    let stopped = false;
    const stopping = lane.stop().then(() => (stopped = true));
    await tick(5);
    expect(stopped).toBe(false);
    first.open();
    await stopping;
    expect(s.calls).toContain('committed i1');
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
        serve: async () => servedBatch(0),
      },
      LOOKAHEAD_MS,
      (e) => failures.push(e),
    );
    lane.follow('t1');
    await lane.stop();
    expect(failures).toHaveLength(1);
    lane.follow('t2');
    await tick(5);
    await lane.stop();
    expect(looks).toBe(2);
  });

  it('a waiting batch that fails is reported once the lane ends', async () => {
    const failures: unknown[] = [];
    let serves = 0;
    const lane = new FreshLane(
      {
        nextDueInMs: async () => 0,
        serve: async (_after, _prepared, onWaiting) => {
          serves++;
          onWaiting({ instant: `i${serves}`, full: false });
          await tick(1);
          throw new Error('commit failed');
        },
      },
      LOOKAHEAD_MS,
      (e) => failures.push(e),
    );
    lane.follow('t1');
    await tick(20);
    await lane.stop();
    expect(failures).toHaveLength(1);
    expect(serves).toBeLessThanOrEqual(2);
  });
});
