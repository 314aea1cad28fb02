import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { ADMIT_WAITING } from '../../src/admission/admission.sql';
import { oneTimeSchedulesBySql } from '../support/sql-seed';
import {
  closeTestDatabase,
  connectTestDatabase,
  type TestDatabase,
} from '../support/test-database';

/** The chunk the tests ask for: one second of a 10/s rate, 10 tokens. */
const CHUNK_MS = 1000;
const RATE = 10;

/**
 * A tenant held back by its rate alone is admitted in chunks (ADMIT_WAITING's $4): with fewer
 * whole tokens than a chunk of its rate it admits none and lets them accumulate, so a throttled
 * flood is admitted in a quarter of the rounds. What the chunk must never hold back: a tenant
 * bound by its permits, a waiting list shorter than the chunk, `high` runs. Each case runs in a
 * transaction of its own, rolled back; a 10/s tenant's bucket refills a token every 100 ms, so a
 * pause of the machine does not move a case across its threshold.
 */
describe('admission: a rate-bound tenant is admitted in chunks of its rate', () => {
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => ({ db, client } = await connectTestDatabase()));
  afterAll(() => closeTestDatabase({ db, client }));

  /**
   * A tenant (its id) with `tokens` banked just now and `runs` waiting for its rate (`high` of
   * them high).
   */
  async function tenantWaiting(options: {
    tokens: number;
    runs: number;
    maxConcurrentRuns?: number;
    high?: number;
  }): Promise<string> {
    const id = randomUUID();
    await client.query(
      `INSERT INTO tenants (id, name, max_active_schedules, dispatch_rate_per_second,
                            max_concurrent_runs)
       VALUES ($1, $2, 1000, $3, $4)`,
      [id, `t-${id}`, RATE, options.maxConcurrentRuns ?? 50],
    );
    await client.query(
      `INSERT INTO tenant_dispatch_budget (tenant_id, tokens, refilled_at)
       VALUES ($1, $2, clock_timestamp())`,
      [id, options.tokens],
    );
    await oneTimeSchedulesBySql(client, id, options.runs, new Date(), 'once');
    await client.query(
      `INSERT INTO occurrences (tenant_id, schedule_id, target_id, revision, scheduled_at,
                                scheduled_local, state, reason, max_attempts, retry_deadline,
                                fires_at, priority)
       SELECT $1, s.id, s.target_id, 1, now() - interval '1 second', '2026-12-01T00:00:00',
              'QUEUED', 'throttled_rate', 3, now() + interval '1 day',
              now() - interval '1 second', CASE WHEN s.n <= $2::int THEN 0 ELSE 1 END
         FROM (SELECT id, target_id, row_number() OVER (ORDER BY name) AS n
                 FROM schedules WHERE tenant_id = $1) s`,
      [id, options.high ?? 0],
    );
    return id;
  }

  /** ADMIT_WAITING for `tenant` in a transaction rolled back: the runs it admitted. */
  async function admitted(
    options: Parameters<typeof tenantWaiting>[0],
    chunkMs = CHUNK_MS,
  ): Promise<number> {
    await client.query('BEGIN');
    try {
      const tenantId = await tenantWaiting(options);
      const { rows } = await client.query<{ outcome: string }>(ADMIT_WAITING, [
        tenantId,
        500,
        500,
        chunkMs,
      ]);
      return rows.filter((row) => row.outcome === 'admitted').length;
    } finally {
      await client.query('ROLLBACK');
    }
  }

  it('admits none while fewer tokens than a chunk are banked, and lets them accumulate', async () => {
    expect(await admitted({ tokens: 3, runs: 30 })).toBe(0);
    // Without a chunk the same tenant admits what its tokens afford at once.
    expect(await admitted({ tokens: 3, runs: 30 }, 0)).toBe(3);
  });

  it('admits all its tokens afford once they make a chunk', async () => {
    expect(await admitted({ tokens: 10, runs: 30 })).toBe(10);
  });

  it('never holds back a tenant bound by its permits', async () => {
    // Two permits, three tokens: the permits bind, so both are admitted now.
    expect(await admitted({ tokens: 3, runs: 30, maxConcurrentRuns: 2 })).toBe(2);
  });

  it('takes a waiting list shorter than the chunk whole, as soon as its tokens afford it', async () => {
    expect(await admitted({ tokens: 3, runs: 2 })).toBe(2);
    // Five waiting, three tokens: the five go together once five tokens are banked.
    expect(await admitted({ tokens: 3, runs: 5 })).toBe(0);
    expect(await admitted({ tokens: 5, runs: 5 })).toBe(5);
  });

  it('never holds back high runs', async () => {
    expect(await admitted({ tokens: 3, runs: 30, high: 1 })).toBe(3);
  });
});
