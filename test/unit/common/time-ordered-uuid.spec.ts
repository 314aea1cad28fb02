import { isUUID } from 'class-validator';
import { isUuid, timeOrderedUuid } from '../../../src/common';

describe('timeOrderedUuid: ids that sort by the time they were made', () => {
  it('is a canonical UUID of version 7 and the RFC variant, which every id check accepts', () => {
    const id = timeOrderedUuid();
    expect(isUuid(id)).toBe(true);
    expect(isUUID(id)).toBe(true);
    expect(id[14]).toBe('7');
    expect(['8', '9', 'a', 'b']).toContain(id[19]);
  });

  it('carries the millisecond it was made in its first 48 bits', () => {
    const at = Date.parse('2026-12-05T07:45:12.345Z');
    const id = timeOrderedUuid(at);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(at);
  });

  it('sorts ids of later milliseconds after earlier ones, as text and as Postgres compares uuids', () => {
    const start = Date.now();
    const ids = Array.from({ length: 200 }, (_, i) => timeOrderedUuid(start + i * 7));
    expect([...ids].sort()).toEqual(ids);
  });

  it('is random beyond the time: 10,000 ids of one millisecond are all distinct', () => {
    const at = Date.now();
    expect(new Set(Array.from({ length: 10_000 }, () => timeOrderedUuid(at))).size).toBe(10_000);
  });

  it('stays a valid, distinct id across many refills of its random pool, every variant digit seen', () => {
    const at = Date.now();
    const ids = Array.from({ length: 5_000 }, () => timeOrderedUuid(at));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(isUuid(id)).toBe(true);
      expect(id[14]).toBe('7');
    }
    expect(new Set(ids.map((id) => id[19]))).toEqual(new Set(['8', '9', 'a', 'b']));
    // The random part is not one pool slice repeated: each position takes many values.
    for (const position of [15, 20, 30, 35]) {
      expect(new Set(ids.map((id) => id[position])).size).toBe(16);
    }
  });
});
