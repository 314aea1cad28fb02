import { randomUUID } from 'node:crypto';
import { plannedFireAt } from '../../../src/schedules';

describe('plannedFireAt', () => {
  const nominal = new Date('2027-03-01T09:00:00Z');

  it('is exactly the nominal instant without a window', () => {
    expect(plannedFireAt(randomUUID(), nominal, 0)).toEqual(nominal);
  });

  it('is the same for the same schedule and instant, wherever it is computed', () => {
    const id = '7f0c6a6e-2a43-4b49-9b1c-3d4ab0e3c001';
    expect(plannedFireAt(id, nominal, 60)).toEqual(plannedFireAt(id, new Date(nominal), 60));
    // And differs between instants of one schedule (not one fixed offset).
    const offsets = new Set(
      Array.from({ length: 20 }, (_, i) => {
        const at = new Date(nominal.getTime() + i * 3_600_000);
        return plannedFireAt(id, at, 60).getTime() - at.getTime();
      }),
    );
    expect(offsets.size).toBeGreaterThan(10);
  });

  it('is never before the nominal instant nor after its window, and spreads over it', () => {
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 2000; i++) {
      const offset = plannedFireAt(randomUUID(), nominal, 10).getTime() - nominal.getTime();
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThanOrEqual(10_000);
      buckets[Math.min(9, Math.floor(offset / 1000))]++;
    }
    // 200 expected per second of the window.
    for (const n of buckets) expect(n).toBeGreaterThan(120);
  });
});
