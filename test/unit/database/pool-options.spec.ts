import { dataSourceOptions, DEFAULT_POOL_IDLE_MS, primaryLocatorFor } from '../../../src/database';
import { SCHEMA } from '../../../src/schema';

const URL = 'postgres://dueline@127.0.0.1:5432/dueline';

/** What the ledger's pool is told (the queue's takes the same primaryPoolOptions). */
describe('pool options', () => {
  const extra = (tuning: { connectTimeoutMs?: number; poolIdleMs?: number } = {}) =>
    (dataSourceOptions(URL, SCHEMA, 5, primaryLocatorFor(URL), tuning) as { extra: object })
      .extra as { idleTimeoutMillis: number; connectionTimeoutMillis: number };

  it("keep an idle connection five minutes by default, not pg-pool's ten seconds", () => {
    expect(DEFAULT_POOL_IDLE_MS).toBe(300_000);
    expect(extra().idleTimeoutMillis).toBe(300_000);
  });

  it('take the configured idle and connect timeouts', () => {
    expect(extra({ connectTimeoutMs: 1500, poolIdleMs: 42_000 })).toMatchObject({
      idleTimeoutMillis: 42_000,
      connectionTimeoutMillis: 1500,
    });
  });
});
