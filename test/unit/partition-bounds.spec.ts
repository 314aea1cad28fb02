import { instantBounds, UNBOUNDED } from '../../src/database';

describe('instantBounds', () => {
  const a = new Date('2026-03-01T10:00:00.000Z');
  const b = new Date('2026-03-01T09:59:59.999Z');
  const c = new Date('2026-03-02T00:00:00.000Z');

  it.each([
    ['one instant: itself to a millisecond after', [a], [a, new Date(a.getTime() + 1)]],
    [
      'several: lowest to a millisecond after the highest',
      [a, c, b],
      [b, new Date(c.getTime() + 1)],
    ],
    ['none: unbounded', [], UNBOUNDED],
    ['one unknown: unbounded', [a, undefined], UNBOUNDED],
    ['a null: unbounded', [null, a], UNBOUNDED],
  ])('%s', (_, instants, expected) => {
    expect(instantBounds(instants)).toEqual(expected);
  });
});
