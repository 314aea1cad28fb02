import { PreparationLead } from '../../../src/poller/preparation-lead';

describe('PreparationLead', () => {
  it('grows with the batch, between its least and its most', () => {
    const lead = new PreparationLead(130, 1000);
    expect(lead.msFor(1)).toBe(130);
    const hundred = lead.msFor(100);
    const thousand = lead.msFor(1000);
    expect(hundred).toBeGreaterThanOrEqual(130);
    expect(thousand).toBeGreaterThan(hundred);
    expect(lead.msFor(100_000)).toBe(1000);
  });

  it('follows what the batches measured: slower preparations start earlier, faster ones later', () => {
    const lead = new PreparationLead(0, 10_000);
    const before = lead.msFor(1000);
    for (let i = 0; i < 20; i++) lead.observe(1000, 2020); // 2 ms an entry
    const slow = lead.msFor(1000);
    expect(slow).toBeGreaterThan(before);
    // 1.5 times the measured cost an entry, plus the fixed part: about 3,020 ms.
    expect(slow).toBeGreaterThan(2900);
    expect(slow).toBeLessThan(3100);
    for (let i = 0; i < 20; i++) lead.observe(1000, 120); // 0.1 ms an entry
    expect(lead.msFor(1000)).toBeLessThan(200);
  });

  it('assumes the given cost of an entry until one is measured', () => {
    // 20 ms fixed, 1.5 times 150 entries at 0.5 (the default) or 1 ms.
    expect(new PreparationLead(0, 10_000).msFor(150)).toBe(133);
    const cautious = new PreparationLead(0, 10_000, 1);
    expect(cautious.msFor(150)).toBe(245);
    cautious.observe(150, 80);
    expect(cautious.msFor(150)).toBeLessThan(245);
  });

  it('ignores a measurement of nothing', () => {
    const lead = new PreparationLead(0, 10_000);
    const before = lead.msFor(500);
    lead.observe(0, 5000);
    lead.observe(500, Number.NaN);
    lead.observe(500, -1);
    expect(lead.msFor(500)).toBe(before);
  });
});
