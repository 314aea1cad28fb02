import { placeOf, summarizeCpuProfile, type CpuProfile } from '../../../bench/cpu-profile';

const frame = (functionName: string, url = '', lineNumber = 0) => ({
  functionName,
  url,
  lineNumber,
});

/** Samples 1 ms apart from t = 1,000,000 µs: idle, pg, ours, GC, pg, idle. */
const profile: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)') },
    { id: 2, callFrame: frame('(idle)') },
    { id: 3, callFrame: frame('addFields', '/app/node_modules/pg/lib/result.js', 81) },
    { id: 4, callFrame: frame('run', '/app/node_modules/.cache/b/src/worker/run-executor.js', 9) },
    { id: 5, callFrame: frame('(garbage collector)') },
  ],
  startTime: 1_000_000,
  endTime: 1_006_000,
  samples: [2, 3, 4, 5, 3, 2],
  timeDeltas: [1000, 1000, 1000, 1000, 1000, 1000],
};

describe('summarizeCpuProfile', () => {
  it('adds self time by place and by function, idle apart', () => {
    const summary = summarizeCpuProfile(profile);
    expect(summary.sampledMs).toBe(6);
    expect(summary.idleMs).toBe(2);
    expect(summary.byPlace).toEqual([
      { name: 'pg', ms: 2, share: 0.5 },
      { name: 'src/worker', ms: 1, share: 0.25 },
      { name: '(native: (garbage collector))', ms: 1, share: 0.25 },
    ]);
    expect(summary.byFunction[0]).toEqual({
      name: 'addFields lib/result.js:82',
      ms: 2,
      share: 0.5,
    });
    expect(summary.byFunction.map((row) => row.name)).toContain('run worker/run-executor.js:10');
  });

  it('keeps only the samples inside the window (the monotonic clock, µs)', () => {
    // Samples land at 1,001,000 ... 1,006,000: the window takes the 2nd to the 4th.
    const summary = summarizeCpuProfile(profile, { fromUs: 1_002_000, toUs: 1_004_000 });
    expect(summary.sampledMs).toBe(3);
    expect(summary.idleMs).toBe(0);
    expect(summary.byPlace.map((row) => row.name)).toEqual([
      'pg',
      'src/worker',
      '(native: (garbage collector))',
    ]);
  });

  it('lists at most `top` rows', () => {
    expect(summarizeCpuProfile(profile, null, 1).byPlace).toHaveLength(1);
  });
});

describe('placeOf', () => {
  it('names a package, a scoped one, a Node.js module, our module or a native frame', () => {
    expect(placeOf('/x/node_modules/pg-protocol/dist/parser.js', 'parse')).toBe('pg-protocol');
    expect(placeOf('/x/node_modules/@nestjs/core/router/a.js', 'f')).toBe('@nestjs/core');
    expect(placeOf('node:net', 'f')).toBe('node:net');
    expect(placeOf('node:internal/streams/readable', 'f')).toBe('node:internal');
    expect(placeOf('/x/dist/src/poller/due-dispatcher.js', 'f')).toBe('src/poller');
    expect(placeOf('/x/node_modules/.cache/b/src/worker/w.js', 'f')).toBe('src/worker');
    expect(placeOf('', 'writev')).toBe('(native: writev)');
  });
});
