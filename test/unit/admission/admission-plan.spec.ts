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
  const budgets = (entries: Record<string, [number, number, boolean?]>) =>
    new Map(
      Object.entries(entries).map(([id, [permits, tokens, waiting]]) => [
        id,
        { permits, tokens, waiting: waiting ?? false },
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
});
