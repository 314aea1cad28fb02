import { loadConfig } from '../../../src/config';
import type { Tx } from '../../../src/database';
import { RunHandoff, type HandoffReceiver, type HandoffRoom } from '../../../src/handoff';
import type { Lifecycle, LifecycleEvent } from '../../../src/observability';
import {
  HIGH_RUNS_QUEUE,
  RUNS_QUEUE,
  type HandedOffJob,
  type RunJobsRepository,
  type RunToPublish,
} from '../../../src/queue';
import { ChildReceiver } from '../../../src/worker-pool/worker-pool';

const config = (env: Record<string, string> = {}) =>
  loadConfig({ WORKER_BATCH_SIZE: '10', WORKER_HANDOFF_GRACE_MS: '2000', ...env });

function handoffWith(env: Record<string, string> = {}) {
  const events: LifecycleEvent[] = [];
  const lifecycle = { emit: (event: LifecycleEvent) => events.push(event) } as unknown as Lifecycle;
  // The jobs' writes, recorded: which way publish() sent each batch.
  const written: Array<{ way: 'queue' | 'handoff'; runs: number; graceMs?: number }> = [];
  const jobs = {
    publish: async (_tx: unknown, runs: readonly RunToPublish[]) => {
      written.push({ way: 'queue', runs: runs.length });
    },
    publishHandedOff: async (_tx: unknown, runs: readonly RunToPublish[], graceMs: number) => {
      written.push({ way: 'handoff', runs: runs.length, graceMs });
      return runs.map((run) => ({ queue: RUNS_QUEUE, id: `job-${run.runId}`, runs: [] }));
    },
  } as unknown as RunJobsRepository;
  return { handoff: new RunHandoff(config(env), lifecycle, jobs), events, written };
}

class FakeReceiver implements HandoffReceiver {
  readonly taken: HandedOffJob[][] = [];
  constructor(public free: HandoffRoom) {}
  room(): HandoffRoom {
    return this.free;
  }
  take(jobs: readonly HandedOffJob[]): void {
    this.taken.push([...jobs]);
  }
}

const runs = (normal: number, high = 0): RunToPublish[] => [
  ...Array.from({ length: normal }, (_, i) => ({
    runId: `n${i}`,
    tenantId: 't',
    scheduledAt: new Date(0),
  })),
  ...Array.from({ length: high }, (_, i) => ({
    runId: `h${i}`,
    tenantId: 't',
    scheduledAt: new Date(0),
    priority: 'high' as const,
  })),
];

describe('the handoff of dispatched runs to a worker beside the poller', () => {
  it('hands a batch only to a worker whose room fits it, by lane', () => {
    const { handoff } = handoffWith();
    expect(handoff.receiverFor(runs(1))).toBeNull(); // no worker beside it
    const full = new FakeReceiver({ high: 3, other: 0 });
    const roomy = new FakeReceiver({ high: 8, other: 6 });
    handoff.register(full);
    // Normal runs never take the slots reserved for high ones.
    expect(handoff.receiverFor(runs(1))).toBeNull();
    // High runs take any slot.
    expect(handoff.receiverFor(runs(0, 3))).toBe(full);
    expect(handoff.receiverFor(runs(0, 4))).toBeNull();
    handoff.register(roomy);
    expect(handoff.receiverFor(runs(6))).toBe(roomy);
    expect(handoff.receiverFor(runs(7))).toBeNull();
    // Both lanes count against the high lane's room (any slot), the others against their own.
    expect(handoff.receiverFor(runs(6, 2))).toBe(roomy);
    expect(handoff.receiverFor(runs(6, 3))).toBeNull();
  });

  it('leaves what a fetch would not take whole, and everything when it is off, to the queue', () => {
    const { handoff } = handoffWith();
    handoff.register(new FakeReceiver({ high: 100, other: 100 }));
    expect(handoff.receiverFor([])).toBeNull();
    expect(handoff.receiverFor(runs(10))).not.toBeNull();
    expect(handoff.receiverFor(runs(11))).toBeNull(); // more than WORKER_BATCH_SIZE
    const off = handoffWith({ WORKER_HANDOFF_GRACE_MS: '0' }).handoff;
    off.register(new FakeReceiver({ high: 100, other: 100 }));
    expect(off.receiverFor(runs(1))).toBeNull();
  });

  it('takes turns among the workers with room, and forgets one that leaves', () => {
    const { handoff } = handoffWith();
    const a = new FakeReceiver({ high: 10, other: 10 });
    const b = new FakeReceiver({ high: 10, other: 10 });
    handoff.register(a);
    const leaveB = handoff.register(b);
    const chosen = [1, 2, 3, 4].map(() => handoff.receiverFor(runs(1)));
    expect(chosen).toEqual([a, b, a, b]);
    leaveB();
    expect([1, 2].map(() => handoff.receiverFor(runs(1)))).toEqual([a, a]);
  });

  it('delivers committed jobs to the chosen worker and counts their runs', () => {
    const { handoff, events } = handoffWith();
    const receiver = new FakeReceiver({ high: 10, other: 10 });
    const jobs: HandedOffJob[] = [
      { queue: RUNS_QUEUE, id: 'j1', runs: [{ runId: 'r1', tenantId: 't' }] },
      {
        queue: HIGH_RUNS_QUEUE,
        id: 'j2',
        runs: [
          { runId: 'r2', tenantId: 't' },
          { runId: 'r3', tenantId: 't' },
        ],
      },
    ];
    handoff.deliver({ receiver, jobs });
    expect(receiver.taken).toEqual([jobs]);
    expect(events).toEqual([{ kind: 'runs.handed_off', count: 3 }]);
    handoff.deliver({ receiver, jobs: [] });
    handoff.deliver(null);
    expect(receiver.taken).toHaveLength(1);
  });

  it('writes the jobs held back for a worker with room, to the queue otherwise', async () => {
    const { handoff, written } = handoffWith();
    const tx = {} as Tx;
    expect(await handoff.publish(tx, runs(2))).toBeNull(); // no worker beside it
    const receiver = new FakeReceiver({ high: 10, other: 10 });
    handoff.register(receiver);
    const pending = await handoff.publish(tx, runs(2));
    expect(pending?.receiver).toBe(receiver);
    expect(pending?.jobs.map((job) => job.id)).toEqual(['job-n0', 'job-n1']);
    expect(await handoff.publish(tx, runs(11))).toBeNull(); // more than a fetch takes
    expect(written).toEqual([
      { way: 'queue', runs: 2 },
      { way: 'handoff', runs: 2, graceMs: 2000 },
      { way: 'queue', runs: 11 },
    ]);
    // Nothing reaches the worker before the caller's commit.
    expect(receiver.taken).toEqual([]);
  });
});

describe('a worker process as the primary sees it', () => {
  it("counts what it handed since the child's last report against the room reported", () => {
    const sent: unknown[] = [];
    const child = { connected: true, send: (message: unknown) => sent.push(message) };
    const receiver = new ChildReceiver(child as never);
    expect(receiver.room()).toEqual({ high: 0, other: 0 }); // nothing reported yet: no handoffs
    receiver.reportedRoom({ high: 10, other: 8 });
    receiver.take([{ queue: RUNS_QUEUE, id: 'j1', runs: [{ runId: 'r1', tenantId: 't' }] }]);
    receiver.take([
      {
        queue: HIGH_RUNS_QUEUE,
        id: 'j2',
        runs: [
          { runId: 'r2', tenantId: 't' },
          { runId: 'r3', tenantId: 't' },
        ],
      },
    ]);
    expect(receiver.room()).toEqual({ high: 7, other: 7 });
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatchObject({ kind: 'handoff.jobs', jobs: [{ id: 'j1' }] });
    // The child's next report counts them in.
    receiver.reportedRoom({ high: 9, other: 8 });
    expect(receiver.room()).toEqual({ high: 9, other: 8 });
    // A child gone: nothing is sent (its jobs are the queue's after their grace).
    child.connected = false;
    receiver.take([{ queue: RUNS_QUEUE, id: 'j3', runs: [{ runId: 'r4', tenantId: 't' }] }]);
    expect(sent).toHaveLength(2);
  });
});
