import { decideAdmission, type AdmissionCandidate } from '../../../src/admission';

describe('decideAdmission', () => {
  const at = (s: number) => new Date(Date.UTC(2027, 0, 1, 9, 0, s));
  const run = (
    tenantId: string,
    s: number,
    priority: AdmissionCandidate['priority'] = 'normal',
  ) => ({
    tenantId,
    scheduledAt: at(s),
    priority,
  });
  const budgets = (entries: Record<string, [number, number, boolean?, number?, number?]>) =>
    new Map(
      Object.entries(entries).map(([id, [permits, tokens, waiting, weight, holding]]) => [
        id,
        { permits, tokens, waiting: waiting ?? false, weight: weight ?? 1, holding: holding ?? 0 },
      ]),
    );
  const summary = (d: ReturnType<typeof decideAdmission>) =>
    d.map((x) => (x.admitted ? 'admit' : x.waitsFor));

  it('admits, per tenant, as many as its free permits and tokens allow, oldest first', () => {
    const runs = [run('a', 3), run('a', 1), run('a', 2), run('b', 1)];
    expect(summary(decideAdmission(runs, budgets({ a: [5, 2], b: [1, 1] })))).toEqual([
      'throttled_rate',
      'admit',
      'admit',
      'admit',
    ]);
  });

  it('names the part of the budget a run waits for', () => {
    const runs = [run('a', 1), run('a', 2), run('a', 3)];
    expect(summary(decideAdmission(runs, budgets({ a: [1, 10] })))).toEqual([
      'admit',
      'throttled_concurrency',
      'throttled_concurrency',
    ]);
  });

  it('puts high before normal before low, whatever the instants', () => {
    const runs = [run('a', 1, 'low'), run('a', 2, 'normal'), run('a', 3, 'high')];
    expect(summary(decideAdmission(runs, budgets({ a: [10, 1] })))).toEqual([
      'throttled_rate',
      'throttled_rate',
      'admit',
    ]);
  });

  it('queues new runs behind runs of the tenant that already wait', () => {
    expect(summary(decideAdmission([run('a', 1)], budgets({ a: [10, 10, true] })))).toEqual([
      'throttled_rate',
    ]);
  });

  it('admits nothing for a tenant it has no budget for (unknown tenant)', () => {
    expect(summary(decideAdmission([run('x', 1)], budgets({})))).toEqual(['throttled_concurrency']);
  });

  describe('with a fleet that has room for fewer normal runs than are affordable', () => {
    it('shares the room by weight and makes the rest wait throttled_fleet', () => {
      const runs = [
        ...[1, 2, 3, 4, 5, 6].map((s) => run('a', s)),
        ...[1, 2, 3, 4, 5, 6].map((s) => run('b', s)),
      ];
      const decided = summary(
        decideAdmission(runs, budgets({ a: [10, 10, false, 1], b: [10, 10, false, 2] }), {
          free: 6,
        }),
      );
      expect(decided.slice(0, 6)).toEqual(['admit', 'admit', ...Array(4).fill('throttled_fleet')]);
      expect(decided.slice(6)).toEqual([
        ...Array(4).fill('admit'),
        'throttled_fleet',
        'throttled_fleet',
      ]);
    });

    it('serves the tenant holding least first', () => {
      const runs = [run('flood', 1), run('flood', 2), run('quiet', 3)];
      const decided = summary(
        decideAdmission(
          runs,
          budgets({ flood: [10, 10, false, 1, 40], quiet: [10, 10, false, 1, 0] }),
          { free: 1 },
        ),
      );
      expect(decided).toEqual(['throttled_fleet', 'throttled_fleet', 'admit']);
    });

    it('never holds back high runs, which have slots reserved at the workers', () => {
      const runs = [run('a', 1, 'high'), run('a', 2, 'normal'), run('a', 3, 'high')];
      expect(summary(decideAdmission(runs, budgets({ a: [10, 10] }), { free: 0 }))).toEqual([
        'admit',
        'throttled_fleet',
        'admit',
      ]);
    });

    it('admits everything affordable when it all fits', () => {
      const runs = [run('a', 1), run('b', 2)];
      expect(
        summary(decideAdmission(runs, budgets({ a: [1, 1], b: [1, 1] }), { free: 2 })),
      ).toEqual(['admit', 'admit']);
    });
  });
});
