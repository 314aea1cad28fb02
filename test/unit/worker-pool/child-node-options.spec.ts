import {
  WORKER_MIN_SEMI_SPACE_MB,
  workerExecArgv,
} from '../../../src/worker-pool/child-node-options';

describe('workerExecArgv', () => {
  it("starts a worker's young generation at its working size, after the primary's flags", () => {
    expect(workerExecArgv(['--enable-source-maps', '--cpu-prof'])).toEqual([
      '--enable-source-maps',
      '--cpu-prof',
      `--min-semi-space-size=${WORKER_MIN_SEMI_SPACE_MB}`,
    ]);
    expect(workerExecArgv([])).toEqual([`--min-semi-space-size=${WORKER_MIN_SEMI_SPACE_MB}`]);
  });

  it("keeps an operator's own young-generation setting", () => {
    for (const flags of [
      ['--min-semi-space-size=4'],
      ['--min_semi_space_size', '8'],
      ['--semi-space-growth-factor=4'],
    ]) {
      expect(workerExecArgv(flags)).toEqual(flags);
    }
  });

  it('leaves the maximum alone: only where the young generation starts changes', () => {
    expect(workerExecArgv(['--max-semi-space-size=32'])).toEqual([
      '--max-semi-space-size=32',
      `--min-semi-space-size=${WORKER_MIN_SEMI_SPACE_MB}`,
    ]);
  });

  it('does not change the flags it was given', () => {
    const primary = ['--inspect=0'];
    workerExecArgv(primary);
    expect(primary).toEqual(['--inspect=0']);
  });
});
