import { backlogPauseMs } from '../../../src/poller/backlog-pause';

describe('backlogPauseMs: the poller makes room after a throttled flood batch', () => {
  it('pauses as long as the batch took when nearly all its runs wait for their budgets', () => {
    expect(backlogPauseMs({ created: 500, published: 0 }, 120)).toBe(120);
    expect(backlogPauseMs({ created: 500, published: 50 }, 80)).toBe(80);
  });

  it('never longer than 250 ms, never negative', () => {
    expect(backlogPauseMs({ created: 500, published: 0 }, 4000)).toBe(250);
    expect(backlogPauseMs({ created: 500, published: 0 }, -3)).toBe(0);
  });

  it('does not pause a backlog whose runs start as they are written', () => {
    expect(backlogPauseMs({ created: 500, published: 500 }, 120)).toBe(0);
    expect(backlogPauseMs({ created: 500, published: 51 }, 120)).toBe(0);
  });

  it('does not pause after a batch that created nothing (stale entries dropped)', () => {
    expect(backlogPauseMs({ created: 0, published: 0 }, 120)).toBe(0);
  });
});
