import { Pool } from 'pg';
import { PreparingPrimaryClient, primaryLocatorFor } from '../../src/database';
import { PgBossService } from '../../src/queue';
import { createTestDatabase, type TestDatabase } from '../support/test-database';
import { startTestApp, type TestApp } from '../support/test-app';

const PREPARED = 'SELECT name, statement FROM pg_prepared_statements';

/**
 * PreparingPrimaryClient: pools whose callers send plain text (pg-boss's) get named prepared
 * statements, which pg_prepared_statements lists for the session that prepared them (an
 * unnamed statement is never listed).
 */
describe('PreparingPrimaryClient', () => {
  let database: TestDatabase;
  let pool: Pool;

  beforeAll(async () => {
    database = await createTestDatabase({ empty: true });
    const locator = primaryLocatorFor(database.url, {
      connectTimeoutMs: 2000,
      primaryCheckIntervalMs: 60_000,
    });
    // One connection: every statement below runs in the session the checks read.
    pool = new Pool({
      connectionString: database.url,
      Client: PreparingPrimaryClient,
      primaryLocator: locator,
      max: 1,
    } as unknown as ConstructorParameters<typeof Pool>[0]);
  });
  afterAll(async () => {
    await pool.end();
    await database.drop();
  });

  it('runs a text with values as a named statement, once prepared, with the right results', async () => {
    const text = 'SELECT $1::int + 1 AS n';
    expect((await pool.query(text, [1])).rows).toEqual([{ n: 2 }]);
    expect((await pool.query(text, [41])).rows).toEqual([{ n: 42 }]);
    const prepared = (await pool.query(PREPARED, [])).rows as Array<{ statement: string }>;
    expect(prepared.filter((p) => p.statement === text)).toHaveLength(1);
  });

  it('answers the callback form pg-pool and pg-boss use, and leaves text without values unnamed', async () => {
    const client = await pool.connect();
    try {
      const rows = await new Promise<unknown[]>((resolve, reject) =>
        client.query('SELECT $1::text AS s', ['via callback'], (error, result) =>
          error ? reject(error) : resolve(result.rows),
        ),
      );
      expect(rows).toEqual([{ s: 'via callback' }]);
      // A simple-protocol text may hold several statements: it must stay unnamed.
      const simple = await client.query('SELECT 7 AS a; SELECT 8 AS b');
      expect(Array.isArray(simple)).toBe(true);
      const prepared = (await client.query(PREPARED, [])).rows as Array<{ statement: string }>;
      const texts = prepared.map((p) => p.statement);
      expect(texts).toContain('SELECT $1::text AS s');
      expect(texts).not.toContain('SELECT 7 AS a; SELECT 8 AS b');
    } finally {
      client.release();
    }
  });

  it("is what pg-boss's own pool runs its statements on", async () => {
    let app: TestApp | undefined;
    try {
      app = await startTestApp({ ROLES: 'worker' });
      const db = app.app.get(PgBossService).boss.getDb();
      const { rows } = await db.executeSql(PREPARED, []);
      expect((rows as Array<{ statement: string }>).map((r) => r.statement)).toContain(PREPARED);
    } finally {
      await app?.close();
    }
  });
});
