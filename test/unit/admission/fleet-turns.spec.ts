import { FleetTurns } from '../../../src/admission/fleet-turns';
import { shareFleet, type SlotDemand } from '../../../src/admission/fleet-share';

describe('FleetTurns', () => {
  const demand = (tenantId: string, weight: number, wants = 100): SlotDemand => ({
    tenantId,
    weight,
    holding: 0,
    wants,
  });

  /** Rounds of the admitter with `free` places each, holdings always near nothing (short calls). */
  function rounds(turns: FleetTurns, demands: SlotDemand[], free: number, count: number) {
    const total = new Map<string, number>();
    for (let i = 0; i < count; i++) {
      const shares = shareFleet(turns.weigh(demands), free);
      turns.served(demands, shares);
      for (const [id, n] of shares) total.set(id, (total.get(id) ?? 0) + n);
    }
    return total;
  }

  it('gives weights 1, 1, 2 their 25 / 25 / 50 % however few places a round has', () => {
    for (const free of [1, 2, 3, 5]) {
      const total = rounds(
        new FleetTurns(),
        [demand('a', 1), demand('b', 1), demand('c', 2)],
        free,
        400,
      );
      const all = [...total.values()].reduce((x, y) => x + y, 0);
      expect(all).toBe(400 * free);
      expect(Math.abs((100 * total.get('a')!) / all - 25)).toBeLessThanOrEqual(1);
      expect(Math.abs((100 * total.get('b')!) / all - 25)).toBeLessThanOrEqual(1);
      expect(Math.abs((100 * total.get('c')!) / all - 50)).toBeLessThanOrEqual(1);
    }
  });

  it('serves a tenant that starts waiting within a turn, without credit for its idle time', () => {
    const turns = new FleetTurns();
    rounds(turns, [demand('a', 1), demand('b', 1)], 1, 100);
    // A newcomer is level with the least served: its run goes within one turn of the others.
    const soon = rounds(turns, [demand('a', 1), demand('b', 1), demand('q', 1)], 1, 3);
    expect(soon.get('q')).toBe(1);
    // And then it takes turns like the others, not 100 runs in a row for the time it was idle.
    const later = rounds(turns, [demand('a', 1), demand('b', 1), demand('q', 1)], 1, 300);
    expect(later.get('q')).toBeGreaterThanOrEqual(99);
    expect(later.get('q')).toBeLessThanOrEqual(101);
  });
});
