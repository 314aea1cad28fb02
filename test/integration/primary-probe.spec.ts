import { Client } from 'pg';
import { createServer, type Socket } from 'node:net';
import { parseDatabaseUrl, PrimaryProbe, PROBE_APPLICATION_NAME } from '../../src/database';
import {
  closeTestDatabase,
  connectTestDatabase,
  type TestDatabase,
} from '../support/test-database';

/** The probe against a real server: one kept session, answering as a new session would. */
describe('PrimaryProbe', () => {
  let database: TestDatabase;
  let admin: Client;

  beforeAll(async () => {
    ({ db: database, client: admin } = await connectTestDatabase({ empty: true }));
  });
  afterAll(() => closeTestDatabase({ db: database, client: admin }));

  const probeOf = (url = database.url) => {
    const address = parseDatabaseUrl(url);
    const probe = new PrimaryProbe(address, 2000);
    probe.keepConnections(true); // as while a locator checks its server
    return { probe, host: address.hosts[0] };
  };

  /** The server processes of the probe's sessions on this file's database. */
  const probeSessions = async (): Promise<number[]> => {
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 ORDER BY pid`,
      [database.name, PROBE_APPLICATION_NAME],
    );
    return rows.map((row) => row.pid);
  };

  /** Until a session the probe dropped has left pg_stat_activity (its exit is asynchronous). */
  const sessionsSettled = async (expected: number): Promise<number[]> => {
    for (let i = 0; i < 100; i++) {
      const pids = await probeSessions();
      if (pids.length === expected) return pids;
      await new Promise((done) => setTimeout(done, 20));
    }
    return probeSessions();
  };

  it('asks the server in use over one kept session, not a new one each time', async () => {
    const { probe, host } = probeOf();
    try {
      await expect(probe.ask(host)).resolves.toBe('writable');
      const [first] = await sessionsSettled(1);
      for (let i = 0; i < 5; i++) {
        await expect(probe.ask(host)).resolves.toBe('writable');
        expect(await probeSessions()).toEqual([first]);
      }
    } finally {
      probe.keepConnections(false);
    }
    expect(await sessionsSettled(0)).toEqual([]);
  });

  it('keeps nothing for a one-off question (a migration, a CLI command) or once told to stop', async () => {
    const address = parseDatabaseUrl(database.url);
    const probe = new PrimaryProbe(address, 2000);
    await expect(probe.ask(address.hosts[0])).resolves.toBe('writable');
    expect(await sessionsSettled(0)).toEqual([]);
    probe.keepConnections(true);
    await expect(probe.ask(address.hosts[0])).resolves.toBe('writable');
    expect(await sessionsSettled(1)).toHaveLength(1);
    probe.keepConnections(false);
    expect(await sessionsSettled(0)).toEqual([]);
  });

  it('replaces a kept session the server ended, and the server still counts as writable', async () => {
    const { probe, host } = probeOf();
    try {
      await expect(probe.ask(host)).resolves.toBe('writable');
      let [kept] = await sessionsSettled(1);
      for (let i = 0; i < 5; i++) {
        // Asked at once: the probe may learn of the end before asking or only by asking.
        await admin.query('SELECT pg_terminate_backend($1)', [kept]);
        await expect(probe.ask(host)).resolves.toBe('writable');
        const [replacement] = await sessionsSettled(1);
        expect(replacement).not.toBe(kept);
        kept = replacement;
      }
    } finally {
      probe.keepConnections(false);
    }
  });

  it("answers as a new session would when the database's default turns read-only", async () => {
    const { probe, host } = probeOf();
    try {
      await expect(probe.ask(host)).resolves.toBe('writable');
      await admin.query(`ALTER DATABASE ${database.name} SET default_transaction_read_only = on`);
      // The kept session started writable; only the catalog says what a new one would get.
      await expect(probe.ask(host)).resolves.toBe('read-only');
      expect(await sessionsSettled(0)).toEqual([]);
      // A setting for this role in this database comes before the database's own.
      await admin.query(
        `ALTER ROLE CURRENT_USER IN DATABASE ${database.name} SET default_transaction_read_only = off`,
      );
      await expect(probe.ask(host)).resolves.toBe('writable');
      await admin.query(
        `ALTER ROLE CURRENT_USER IN DATABASE ${database.name} SET default_transaction_read_only = yes`,
      );
      await expect(probe.ask(host)).resolves.toBe('read-only');
    } finally {
      probe.keepConnections(false);
      await admin.query(
        `ALTER ROLE CURRENT_USER IN DATABASE ${database.name} RESET default_transaction_read_only`,
      );
      await admin.query(`ALTER DATABASE ${database.name} RESET default_transaction_read_only`);
    }
    const after = probeOf();
    await expect(after.probe.ask(after.host)).resolves.toBe('writable');
    after.probe.keepConnections(false);
  });

  it('counts a server that does not answer as unreachable, within its bound', async () => {
    // A port that accepts connections and never answers: a server that hangs. Its side of each
    // connection is closed at the end, or it would hold the test process open.
    const accepted = new Set<Socket>();
    const silent = createServer((socket) => accepted.add(socket));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const port = (silent.address() as { port: number }).port;
    const { probe, host } = probeOf(`postgres://u@127.0.0.1:${port}/db`);
    try {
      const started = Date.now();
      await expect(probe.ask(host)).resolves.toBe('unreachable');
      expect(Date.now() - started).toBeLessThan(2000 + 1000);
    } finally {
      probe.keepConnections(false);
      for (const socket of accepted) socket.destroy();
      silent.close();
    }
  });
});
