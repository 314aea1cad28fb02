import { backlogBatchSize, backlogPauseMs } from '../../../src/poller/backlog-pause';

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

describe('backlogBatchSize: a throttled flood is written in small batches', () => {
  it('shrinks the batches after one whose runs nearly all wait for their budget', () => {
    expect(backlogBatchSize({ created: 500, published: 0 }, 500)).toBe(100);
    expect(backlogBatchSize({ created: 100, published: 10 }, 500)).toBe(100);
  });

  it('never grows past the configured size', () => {
    expect(backlogBatchSize({ created: 50, published: 0 }, 50)).toBe(50);
  });

  it('keeps the configured size for a backlog whose runs start as they are written', () => {
    expect(backlogBatchSize({ created: 500, published: 500 }, 500)).toBe(500);
    expect(backlogBatchSize({ created: 500, published: 51 }, 500)).toBe(500);
    expect(backlogBatchSize({ created: 0, published: 0 }, 500)).toBe(500);
  });
});
