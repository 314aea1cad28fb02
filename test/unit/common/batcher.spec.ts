import type { Completion, CompletionResult } from '../../../src/execution';
import { Batcher } from '../../../src/common';

const completion = (runId: string): Completion => ({
  tenantId: 't',
  runId,
  fencingToken: 1,
  report: { outcome: 'succeeded', error: null, mayHaveActed: false },
});

const accepted = (runId: string): CompletionResult => ({
  accepted: true,
  state: 'SUCCEEDED',
  reason: null,
  reasonDetail: runId,
  nextAttemptAt: null,
  retryInMs: null,
});

const idOf = (c: Completion) => c.runId;
const batcher100 = (r: ReturnType<typeof recorder>) =>
  new Batcher(r.completeMany, { maxBatch: 100, idOf });

/** Records every batch it is given and answers each completion with its own run id. */
function recorder(fail: (batch: Completion[]) => boolean = () => false) {
  const batches: string[][] = [];
  const completeMany = async (batch: Completion[]) => {
    batches.push(batch.map((c) => c.runId));
    // A real batch takes a round trip: yield, so later submits queue up behind this one.
    await new Promise((done) => setImmediate(done));
    if (fail(batch)) throw new Error(`batch of ${batch.length} failed`);
    return batch.map((c) => accepted(c.runId));
  };
  return { batches, completeMany };
}

describe('Batcher', () => {
  it('writes completions that arrive together in one batch, each caller getting its own result', async () => {
    const r = recorder();
    const batcher = batcher100(r);
    const results = await Promise.all(['a', 'b', 'c'].map((id) => batcher.submit(completion(id))));
    expect(r.batches).toEqual([['a', 'b', 'c']]);
    expect(results.map((x) => x.accepted && x.reasonDetail)).toEqual(['a', 'b', 'c']);
  });

  it('never exceeds the batch size; what arrives during a batch goes in the next', async () => {
    const r = recorder();
    const batcher = new Batcher(r.completeMany, { maxBatch: 2, idOf });
    const first = ['a', 'b', 'c'].map((id) => batcher.submit(completion(id)));
    await new Promise((done) => setImmediate(done));
    const late = batcher.submit(completion('d'));
    await Promise.all([...first, late]);
    expect(r.batches).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
  });

  it('puts a second completion of the same run in a later batch', async () => {
    const r = recorder();
    const batcher = batcher100(r);
    await Promise.all(['a', 'a', 'b'].map((id) => batcher.submit(completion(id))));
    expect(r.batches).toEqual([['a', 'b'], ['a']]);
  });

  it('a failing batch is retried one by one, so one bad completion fails alone', async () => {
    const r = recorder((batch) => batch.some((c) => c.runId === 'bad'));
    const batcher = batcher100(r);
    const settled = await Promise.allSettled(
      ['a', 'bad', 'b'].map((id) => batcher.submit(completion(id))),
    );
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(r.batches[0]).toEqual(['a', 'bad', 'b']);
    expect(r.batches.slice(1).sort()).toEqual([['a'], ['b'], ['bad']]);
  });
});

describe('Batcher with batches in flight beside each other (maxInFlight)', () => {
  /**
   * A batcher of `maxInFlight` whose every batch is held until its release is called; records
   * the batches and how many ran at once.
   */
  function gated(maxInFlight: number) {
    const batches: string[][] = [];
    const releases: Array<() => void> = [];
    let running = 0;
    let mostAtOnce = 0;
    const run = async (batch: Completion[]) => {
      batches.push(batch.map((c) => c.runId));
      running++;
      mostAtOnce = Math.max(mostAtOnce, running);
      await new Promise<void>((release) => releases.push(release));
      running--;
      return batch.map((c) => accepted(c.runId));
    };
    const batcher = new Batcher(run, { maxBatch: 100, idOf, maxInFlight });
    return { batches, releases, batcher, mostAtOnce: () => mostAtOnce };
  }
  const turn = () => new Promise((done) => setImmediate(done));

  it('starts what comes while a batch is in flight in a batch of its own, not behind it', async () => {
    const { batcher, ...g } = gated(2);
    const first = batcher.submit(completion('flood-1'));
    await turn();
    const quiet = batcher.submit(completion('quiet-1'));
    await turn();
    // The first batch is still held, and the second has started beside it.
    expect(g.batches).toEqual([['flood-1'], ['quiet-1']]);
    g.releases[1]();
    await expect(quiet).resolves.toMatchObject({ reasonDetail: 'quiet-1' });
    g.releases[0]();
    await expect(first).resolves.toMatchObject({ reasonDetail: 'flood-1' });
  });

  it('never has more than maxInFlight batches in flight; the rest gather into the next', async () => {
    const { batcher, ...g } = gated(2);
    const submitted: Array<Promise<CompletionResult>> = [];
    for (const id of ['a', 'b', 'c', 'd']) {
      submitted.push(batcher.submit(completion(id)));
      await turn();
    }
    expect(g.batches).toEqual([['a'], ['b']]);
    g.releases[0]();
    await turn();
    await turn();
    expect(g.batches).toEqual([['a'], ['b'], ['c', 'd']]);
    g.releases[1]();
    g.releases[2]();
    await Promise.all(submitted);
    expect(g.mostAtOnce()).toBe(2);
    expect(batcher.idle).toBe(true);
  });

  it('keeps an id out of a second batch while it is in one in flight', async () => {
    const { batcher, ...g } = gated(3);
    const first = batcher.submit(completion('a'));
    await turn();
    const again = batcher.submit(completion('a'));
    const other = batcher.submit(completion('b'));
    await turn();
    // 'b' went beside the first batch; the second 'a' waits for the first to end.
    expect(g.batches).toEqual([['a'], ['b']]);
    g.releases[0]();
    await first;
    await turn();
    expect(g.batches).toEqual([['a'], ['b'], ['a']]);
    g.releases[1]();
    g.releases[2]();
    await Promise.all([again, other]);
  });
});

describe('Batcher with a linger (lingerMs)', () => {
  const pause = (ms: number) => new Promise((done) => setTimeout(done, ms));

  it('gathers items submitted apart within the linger into one batch', async () => {
    const r = recorder();
    const batcher = new Batcher(r.completeMany, { maxBatch: 100, idOf, lingerMs: 300 });
    const first = batcher.submit(completion('a'));
    await pause(20);
    // Without a linger, 'a' would have gone alone on the turn after its submit.
    expect(r.batches).toEqual([]);
    const second = batcher.submit(completion('b'));
    await Promise.all([first, second]);
    expect(r.batches).toEqual([['a', 'b']]);
  });

  it('sends a full batch at once, without waiting out the linger', async () => {
    const r = recorder();
    // A linger no test would wait out: the batch resolving at all shows it did not wait.
    const batcher = new Batcher(r.completeMany, { maxBatch: 2, idOf, lingerMs: 600_000 });
    const first = batcher.submit(completion('a'));
    await pause(5);
    const results = await Promise.all([first, batcher.submit(completion('b'))]);
    expect(r.batches).toEqual([['a', 'b']]);
    expect(results.map((x) => x.accepted && x.reasonDetail)).toEqual(['a', 'b']);
  });

  it('sends at once what waited out its linger behind a batch in flight', async () => {
    let release: () => void = () => undefined;
    const batches: string[][] = [];
    const batcher = new Batcher(
      async (batch: Completion[]) => {
        batches.push(batch.map((c) => c.runId));
        if (batches.length === 1) await new Promise<void>((done) => (release = done));
        return batch.map((c) => accepted(c.runId));
      },
      { maxBatch: 100, idOf, lingerMs: 30 },
    );
    const first = batcher.submit(completion('a'));
    await pause(60);
    expect(batches).toEqual([['a']]);
    const behind = batcher.submit(completion('b'));
    await pause(60);
    release();
    await first;
    // 'b' has waited longer than its linger: it goes on the next turn, not 30 ms later.
    await new Promise((done) => setImmediate(done));
    await new Promise((done) => setImmediate(done));
    expect(batches).toEqual([['a'], ['b']]);
    await behind;
  });
});
