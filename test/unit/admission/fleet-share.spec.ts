import { shareFleet, type SlotDemand } from '../../../src/admission/fleet-share';

describe('shareFleet', () => {
  const demand = (tenantId: string, weight: number, holding: number, wants: number) =>
    ({ tenantId, weight, holding, wants }) satisfies SlotDemand;
  const shares = (demands: SlotDemand[], free: number) =>
    Object.fromEntries(shareFleet(demands, free));

  it('gives everyone what it wants when the room is enough', () => {
    expect(shares([demand('a', 1, 5, 3), demand('b', 1, 0, 2)], 10)).toEqual({ a: 3, b: 2 });
  });

  it('brings holdings to the same level per weight: 1, 1, 2 from nothing', () => {
    const out = shares(
      [demand('a', 1, 0, 100), demand('b', 1, 0, 100), demand('c', 2, 0, 100)],
      40,
    );
    expect(out).toEqual({ a: 10, b: 10, c: 20 });
  });

  it('fills the tenant furthest below its share first', () => {
    // a holds 30 with weight 1; b holds 0 with weight 1: 10 places all go to b.
    expect(shares([demand('a', 1, 30, 50), demand('b', 1, 0, 50)], 10)).toEqual({ a: 0, b: 10 });
    // Past the level, the rest is split: holdings end at 30/30 + 10 more each.
    expect(shares([demand('a', 1, 30, 50), demand('b', 1, 0, 50)], 50)).toEqual({ a: 10, b: 40 });
  });

  it('gives what a capped tenant cannot take to the others', () => {
    expect(shares([demand('a', 1, 0, 2), demand('b', 1, 0, 100)], 20)).toEqual({ a: 2, b: 18 });
  });

  it('gives every place, and never more than the room', () => {
    const demands = [demand('a', 3, 1, 7), demand('b', 1, 2, 9), demand('c', 7, 0, 4)];
    for (let free = 0; free <= 20; free++) {
      const out = shareFleet(demands, free);
      const given = [...out.values()].reduce((a, b) => a + b, 0);
      expect(given).toBe(Math.min(free, 20));
      for (const d of demands) expect(out.get(d.tenantId)).toBeLessThanOrEqual(d.wants);
    }
  });

  it('gives nothing without room', () => {
    expect(shares([demand('a', 1, 0, 5)], 0)).toEqual({ a: 0 });
  });
});
