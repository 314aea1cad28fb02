import { Client, Pool } from 'pg';
import { PreparingPrimaryClient, PrimaryClient, primaryLocatorFor } from '../../src/database';
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

  it("recovers through the pool after a migration changed a statement's result type, the one call failing", async () => {
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    try {
      await admin.query('CREATE TABLE widened (id int PRIMARY KEY)');
      await admin.query('INSERT INTO widened VALUES (1)');
      const text = 'SELECT * FROM widened WHERE id = $1';
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1 }]);
      // A newer replica's migration adds a column that the prepared `*` covers.
      await admin.query('ALTER TABLE widened ADD COLUMN note text');
      await expect(pool.query(text, [1])).rejects.toMatchObject({ code: '0A000' });
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, note: null }]);
      expect((await pool.query(text, [1])).rows).toEqual([{ id: 1, note: null }]);
    } finally {
      await admin.end();
    }
  });

  // A connection that is kept after the failure (TypeORM's, checked out) must stop using the
  // statement: the server keeps it as prepared and would refuse it at every call.
  it("runs the engine's named statement unnamed on a kept connection after its result type changed", async () => {
    const admin = new Client({ connectionString: database.url });
    await admin.connect();
    const client = new PrimaryClient({
      connectionString: database.url,
      primaryLocator: primaryLocatorFor(database.url, {
        connectTimeoutMs: 2000,
        primaryCheckIntervalMs: 60_000,
      }),
    });
    await client.connect();
    const named = { name: 'widened_probe', text: 'SELECT * FROM widened_too', values: [] };
    const viaCallback = () =>
      new Promise<unknown[]>((resolve, reject) =>
        client.query(named, (error: Error | null, result: { rows: unknown[] }) =>
          error ? reject(error) : resolve(result.rows),
        ),
      );
    try {
      await admin.query('CREATE TABLE widened_too (id int)');
      await admin.query('INSERT INTO widened_too VALUES (7)');
      expect((await client.query(named)).rows).toEqual([{ id: 7 }]);
      await admin.query('ALTER TABLE widened_too ADD COLUMN note text');
      await expect(viaCallback()).rejects.toMatchObject({ code: '0A000' });
      expect(await viaCallback()).toEqual([{ id: 7, note: null }]);
      expect((await client.query(named)).rows).toEqual([{ id: 7, note: null }]);
    } finally {
      await client.end();
      await admin.end();
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
