import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { Client } from 'pg';
import { eventually } from '../support/eventually';
import { tenantWithTarget } from '../support/scheduling';
import { startTestApp, type TestApp } from '../support/test-app';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** A loopback port nothing listens on (a server of the formation that is down). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  await new Promise((done) => server.close(done));
  return port;
}

/** The test database's URL with a dead first host before it, as a two-host formation URL. */
function formationUrl(database: TestDatabase, deadPort: number): string {
  const url = new URL(database.url);
  const auth = url.username ? `${url.username}${url.password ? `:${url.password}` : ''}@` : '';
  return `postgres://${auth}127.0.0.1:${deadPort},${url.host}${url.pathname}?target_session_attrs=read-write`;
}

/**
 * One real server stands for a formation whose primary goes away: a dead first host, then the
 * database turned read-only (what a demoted primary looks like to new sessions) and back.
 */
describe('no writable database server', () => {
  let database: TestDatabase;
  let t: TestApp;
  let admin: Client;

  beforeAll(async () => {
    database = await createTestDatabase();
    admin = new Client({ connectionString: database.url });
    await admin.connect();
    t = await startTestApp(
      {
        DATABASE_URL: formationUrl(database, await closedPort()),
        ROLES: 'api,poller',
        DATABASE_CONNECT_TIMEOUT_MS: '1000',
        DATABASE_PRIMARY_CHECK_INTERVAL_MS: '200',
        REQUEST_TIMEOUT_MS: '1500',
      },
      { database },
    );
  });

  afterAll(async () => {
    await admin.query(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
    await admin.end();
    await t.close();
    await database.drop();
  });

  const setReadOnly = async (on: boolean) =>
    admin.query(
      on
        ? `ALTER DATABASE ${database.name} SET default_transaction_read_only = on`
        : `ALTER DATABASE ${database.name} RESET default_transaction_read_only`,
    );

  it('finds the writable server behind a dead first host, refuses a read-only one, and comes back', async () => {
    const make = await tenantWithTarget(t);
    await make.createSchedule({ runAt: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await t.http.get('/health/ready')).status).toBe(200);

    await setReadOnly(true);

    // Readiness says so, and a management write is a 503 problem with Retry-After, not a 500.
    await eventually(async () => expect((await t.http.get('/health/ready')).status).toBe(503), {
      timeoutMs: 10_000,
    });
    const started = Date.now();
    const refused = await t.http
      .post('/schedules')
      .set('Authorization', `Bearer ${make.tenant.apiKey}`)
      .set('Idempotency-Key', randomUUID())
      .send({
        name: 's',
        targetId: make.targetId,
        runAt: new Date(Date.now() + 3_600_000).toISOString(),
      });
    expect(refused.status).toBe(503);
    expect(refused.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.body).toMatchObject({
      status: 503,
      type: expect.stringMatching(/unavailable$/),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    // Nothing was written while the server refused writes.
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM schedules');
    expect(rows[0].n).toBe(1);

    await setReadOnly(false);
    await eventually(async () => expect((await t.http.get('/health/ready')).status).toBe(200), {
      timeoutMs: 10_000,
    });
    await eventually(
      () => make.createSchedule({ runAt: new Date(Date.now() + 3_600_000).toISOString() }),
      { timeoutMs: 10_000, intervalMs: 200 },
    );
  });

  it('answers a write that hangs on the database with a 503 within the request bound', async () => {
    const make = await tenantWithTarget(t);
    const key = randomUUID();
    const body = {
      name: 'held',
      targetId: make.targetId,
      runAt: new Date(Date.now() + 3_600_000).toISOString(),
    };
    // The schedule rows are locked as a stopped server would hold them: the create waits.
    await admin.query('BEGIN');
    await admin.query('LOCK TABLE schedules IN ACCESS EXCLUSIVE MODE');
    const started = Date.now();
    const held = await t.http
      .post('/schedules')
      .set('Authorization', `Bearer ${make.tenant.apiKey}`)
      .set('Idempotency-Key', key)
      .send(body);
    const tookMs = Date.now() - started;
    await admin.query('ROLLBACK');
    expect(held.status).toBe(503);
    expect(held.headers['retry-after']).toBe('5');
    expect(held.body.detail).toMatch(/may or may not have taken effect/);
    expect(tookMs).toBeGreaterThanOrEqual(1_400);
    expect(tookMs).toBeLessThan(4_000);
    // Its work went on once the lock was gone: the retry with the same key answers 201 with the
    // schedule the first call created (or creates it, had the first not got through).
    const retried = await eventually(
      async () => {
        const res = await t.http
          .post('/schedules')
          .set('Authorization', `Bearer ${make.tenant.apiKey}`)
          .set('Idempotency-Key', key)
          .send(body);
        expect(res.status).toBe(201);
        return res;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const { rows } = await admin.query('SELECT count(*)::int AS n FROM schedules WHERE id = $1', [
      retried.body.id,
    ]);
    expect(rows[0].n).toBe(1);
  });
});
