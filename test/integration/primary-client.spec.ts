import { Client } from 'pg';
import { createServer } from 'node:net';
import {
  databaseRoundTrips,
  NoWritableHostError,
  PrimaryClient,
  primaryLocatorFor,
  primarySocket,
  ReadOnlyServerError,
} from '../../src/database';
import {
  closeTestDatabase,
  connectTestDatabase,
  type TestDatabase,
} from '../support/test-database';

/** The net.Socket methods a flush of written chunks goes through. */
type SocketFlushes = Record<'_write' | '_writev', (...args: unknown[]) => unknown>;

/** PrimaryClient against a real server: the session it hands out, and the ones it refuses. */
describe('PrimaryClient', () => {
  let database: TestDatabase;
  let admin: Client;

  beforeAll(async () => {
    ({ db: database, client: admin } = await connectTestDatabase({ empty: true }));
  });
  afterAll(() => closeTestDatabase({ db: database, client: admin }));

  /** `pipeline`: statements written without waiting for answers, as the service's pools do. */
  const connect = async (url = database.url, { pipeline = false } = {}) => {
    const locator = primaryLocatorFor(url, {
      connectTimeoutMs: 2000,
      primaryCheckIntervalMs: 60_000,
    });
    const client = new PrimaryClient({ connectionString: url, primaryLocator: locator, pipeline });
    await client.connect();
    return { client, locator };
  };

  it('holds our sessions to synchronous_commit of at least on, whatever the database says', async () => {
    await admin.query(`ALTER DATABASE ${database.name} SET synchronous_commit = off`);
    try {
      const { client } = await connect();
      const { rows } = await client.query('SHOW synchronous_commit');
      expect(rows[0].synchronous_commit).toBe('on');
      await client.end();
      await admin.query(`ALTER DATABASE ${database.name} SET synchronous_commit = remote_apply`);
      const stronger = await connect();
      const kept = await stronger.client.query('SHOW synchronous_commit');
      expect(kept.rows[0].synchronous_commit).toBe('remote_apply');
      await stronger.client.end();
    } finally {
      await admin.query(`ALTER DATABASE ${database.name} RESET synchronous_commit`);
    }
  });

  it('counts one round trip per query, simple or extended, for the cost meter', async () => {
    const { client } = await connect();
    const before = databaseRoundTrips();
    await client.query('SELECT 1');
    await client.query('SELECT $1::int AS n', [2]);
    await client.query({ name: 'round-trip-probe', text: 'SELECT $1::int AS n', values: [3] });
    expect(databaseRoundTrips() - before).toBe(3);
    await client.end();
  });

  it('sends the statements written in one tick in one socket write, answered in order', async () => {
    const { client } = await connect(database.url, { pipeline: true });
    // The socket's flushes: one per write the kernel sees (a corked socket flushes its chunks
    // in one _writev).
    const socket = (client as unknown as { connection: { stream: SocketFlushes } }).connection
      .stream;
    let flushes = 0;
    for (const method of ['_write', '_writev'] as const) {
      const original = socket[method].bind(socket);
      socket[method] = ((...args: unknown[]) => {
        flushes++;
        return (original as (...a: unknown[]) => unknown)(...args);
      }) as never;
    }
    try {
      // A transaction as SqlRunner writes one: BEGIN, statements, COMMIT, none waiting.
      const answers = Promise.all([
        client.query('BEGIN'),
        client.query('SELECT $1::int AS n', [1]),
        client.query({ name: 'one-write-probe', text: 'SELECT $1::int AS n', values: [2] }),
        client.query('SELECT $1::text AS t', ['three']),
        client.query('COMMIT'),
      ]);
      const [, one, two, three, commit] = await answers;
      expect(flushes).toBe(1);
      expect([one.rows[0].n, two.rows[0].n, three.rows[0].t, commit.command]).toEqual([
        1,
        2,
        'three',
        'COMMIT',
      ]);
      // A statement written after an answer is its own write.
      await client.query('SELECT 1');
      expect(flushes).toBe(2);
    } finally {
      await client.end();
    }
  });

  it('gives a client it cannot build (pg-boss LISTEN) a socket to the primary, whatever its URL says', async () => {
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const deadPort = (probe.address() as { port: number }).port;
    await new Promise((done) => probe.close(done));
    const real = new URL(database.url);
    const auth = `${real.username}${real.password ? `:${real.password}` : ''}`;
    const formation = `postgres://${auth}@127.0.0.1:${deadPort},${real.host}${real.pathname}`;
    const locator = primaryLocatorFor(formation, {
      connectTimeoutMs: 2000,
      primaryCheckIntervalMs: 60_000,
    });
    // The URL names the dead host, as pg-boss's config does (its first host); the socket dials
    // the located primary instead.
    const client = new Client({
      connectionString: `postgres://${auth}@127.0.0.1:${deadPort}${real.pathname}`,
      stream: primarySocket(locator),
    });
    await client.connect();
    const { rows } = await client.query('SELECT current_database() AS db');
    expect(rows[0].db).toBe(database.name);
    await client.end();
  });

  it('refuses a server that turned read-only after it was located', async () => {
    const { client, locator } = await connect();
    await client.end();
    await admin.query(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
    try {
      // The locator still has it as the primary; the connection's own check refuses it.
      const late = new PrimaryClient({ connectionString: database.url, primaryLocator: locator });
      await expect(late.connect()).rejects.toThrow(ReadOnlyServerError);
      expect(locator.known()).toBeNull();
      const again = new PrimaryClient({ connectionString: database.url, primaryLocator: locator });
      await expect(again.connect()).rejects.toThrow(NoWritableHostError);
    } finally {
      await admin.query(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
    }
  });
});
