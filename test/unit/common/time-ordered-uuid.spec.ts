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
});
