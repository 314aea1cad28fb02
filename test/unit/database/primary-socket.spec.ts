import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { primarySocket, type PrimaryLocator } from '../../../src/database';

/** The socket pg-boss's LISTEN client dials through: it must reach a socket-directory host too. */
describe('primarySocket', () => {
  let dir: string;
  let server: Server;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dueline-sock-'));
    server = createServer((socket) => socket.end());
    // Where libpq and pg look for a server on port 6543 whose host is the directory.
    await new Promise<void>((done) => server.listen(join(dir, '.s.PGSQL.6543'), done));
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(dir, { recursive: true, force: true });
  });

  it('dials the Unix socket of a located host that is a socket directory', async () => {
    const untracked: string[] = [];
    const locator = {
      locate: () => Promise.resolve({ host: dir, port: 6543 }),
      track: () => () => untracked.push('closed'),
      forget: () => undefined,
    } as unknown as PrimaryLocator;
    const accepted = new Promise<void>((done) => server.once('connection', () => done()));
    const socket = primarySocket(locator)();
    const failed = new Promise<never>((_, fail) => socket.once('error', fail));
    socket.connect(5432, 'ignored-host');
    // Dialled as a TCP host instead, the directory's name fails at once.
    await Promise.race([accepted, failed]);
    await new Promise((done) => socket.once('close', done));
    expect(untracked).toEqual(['closed']);
  });
});
