import type { CrowdedInstant } from '../../../src/due-index';
import {
  CrowdedInstantLane,
  type CrowdedInstantDispatch,
} from '../../../src/poller/crowded-instant-lane';
import { servedBatch } from '../../support/dispatch-results';

const SETTINGS = { minEntries: 100, batchSize: 2000, minLeadMs: 130 };

const instant = (exact: string, entries: number, inMs: number): CrowdedInstant => ({
  exact,
  at: new Date(0),
  entries,
  inMs,
});

/** A dispatch that answers the lane's looks from a script and records what it asked. */
function scripted(looks: Array<CrowdedInstant | null | Error>) {
  const calls: string[] = [];
  let lookedAll!: () => void;
  const done = new Promise<void>((resolve) => (lookedAll = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let lane: CrowdedInstantLane | null = null;
  const dispatch: CrowdedInstantDispatch = {
    next: async (excluding) => {
      calls.push(`look${excluding.length > 0 ? ` past ${excluding.join(',')}` : ''}`);
      if (looks.length === 0) {
        lookedAll();
        return null;
      }
      const look = looks.shift()!;
      if (look instanceof Error) throw look;
      return look;
    },
    serve: async (exact, hooks) => {
      calls.push(`serve ${exact} (preparing ${lane?.preparing?.exact})`);
      await hooks.beforeAdmission();
      hooks.onWaiting();
      await released;
      calls.push(`committed ${exact}`);
      return servedBatch(500);
    },
    settled: (result) => calls.push(`settled ${result?.entries ?? 'failed'}`),
  };
  return { calls, dispatch, done, release, attach: (l: CrowdedInstantLane) => (lane = l) };
}

/** Runs a lane over a script whose batches commit at once, until it has looked at all of it. */
async function runThrough(s: ReturnType<typeof scripted>): Promise<unknown[]> {
  const failures: unknown[] = [];
  const lane = new CrowdedInstantLane(s.dispatch, SETTINGS, (e) => failures.push(e));
  s.attach(lane);
  s.release();
  lane.start();
  await s.done;
  await lane.stop();
  expect(lane.preparing).toBeNull();
  return failures;
}

describe('CrowdedInstantLane', () => {
  it('prepares a crowded instant once it is within the lead, and never twice', async () => {
    // Far ahead first (looked at again later), then within the lead.
    const s = scripted([instant('i1', 500, 900), instant('i1', 500, 100)]);
    const failures = await runThrough(s);
    expect(s.calls).toEqual([
      'look',
      'look',
      'serve i1 (preparing i1)',
      'committed i1',
      'settled 500',
      // What the batch left of i1 is the rounds': the lane looks past it.
      'look past i1',
    ]);
    expect(failures).toEqual([]);
  });

  it('leaves an instant too few entries share to the rounds', async () => {
    const s = scripted([instant('i1', 99, 10), instant('i2', 100, 10)]);
    expect(await runThrough(s)).toEqual([]);
    expect(s.calls).toEqual([
      'look',
      'look',
      'serve i2 (preparing i2)',
      'committed i2',
      'settled 500',
      'look past i2',
    ]);
  });

  it('goes on looking after a failed look, and reports it', async () => {
    const s = scripted([new Error('database away')]);
    const failures: unknown[] = [];
    const lane = new CrowdedInstantLane(s.dispatch, SETTINGS, (e) => failures.push(e));
    lane.start();
    await s.done;
    await lane.stop();
    expect((failures[0] as Error).message).toBe('database away');
    expect(s.calls).toEqual(['look', 'look']);
  });

  it('stops after its batch commits, not before', async () => {
    const s = scripted([instant('i1', 500, 10)]);
    const lane = new CrowdedInstantLane(s.dispatch, SETTINGS, () => undefined);
    s.attach(lane);
    lane.start();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(lane.preparing?.exact).toBe('i1');
    let stopped = false;
    const stopping = lane.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(stopped).toBe(false);
    s.release();
    await stopping;
    expect(s.calls).toEqual(['look', 'serve i1 (preparing i1)', 'committed i1', 'settled 500']);
  });
});
