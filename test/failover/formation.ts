import { execFile, spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { unusedListenPort } from '../../src/common';
import { eventually } from '../support/eventually';

const run = promisify(execFile);
export const PG_BIN = '/usr/lib/postgresql/15/bin';

/**
 * The monitor's failure detection, shortened from pg_auto_failover's defaults (5 s checks,
 * 20 s before a node is unhealthy, 30 s for a lost primary to demote itself: about 50 s to a
 * promotion, measured here) so the test fails over within seconds. The order matters for
 * safety: a primary cut off from the monitor and its standby demotes itself after the keeper's
 * network_partition_timeout (2 s here), which must be shorter than the monitor's
 * primary_demote_timeout (4 s) before it promotes the standby.
 */
const MONITOR_SETTINGS: Record<string, string> = {
  'pgautofailover.health_check_period': '1000',
  'pgautofailover.health_check_timeout': '1000',
  'pgautofailover.health_check_max_retries': '1',
  'pgautofailover.health_check_retry_delay': '500',
  'pgautofailover.node_considered_unhealthy_timeout': '2000',
  'pgautofailover.primary_demote_timeout': '4000',
};
const KEEPER_NETWORK_PARTITION_TIMEOUT_S = '2';

export interface FormationNode {
  name: string;
  port: number;
  dir: string;
  process: ChildProcess | null;
}

/** Distinct free loopback ports below the ephemeral range, for the formation's servers. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  // Two draws of the same port are rare; a bound keeps a broken chooser from spinning.
  for (let draw = 0; ports.size < count && draw < 10 * count; draw++) {
    ports.add(await unusedListenPort());
  }
  if (ports.size < count) throw new Error(`no ${count} distinct free ports`);
  return [...ports];
}

/**
 * A pg_auto_failover formation on loopback ports: a monitor, a primary and a synchronous
 * secondary (Debian's postgresql-15-auto-failover). Postgres refuses to run as root, so as root
 * every pg_autoctl runs as the `postgres` system user, in a temporary directory of its own
 * (its state and configuration too: XDG_* point there).
 */
export class Formation {
  readonly monitor: FormationNode;
  readonly nodes: FormationNode[];

  private constructor(
    readonly dir: string,
    ports: number[],
  ) {
    const node = (name: string, port: number): FormationNode => ({
      name,
      port,
      dir: join(dir, name),
      process: null,
    });
    this.monitor = node('monitor', ports[0]);
    this.nodes = [node('node_1', ports[1]), node('node_2', ports[2])];
  }

  static async create(log: (line: string) => void): Promise<Formation> {
    const dir = mkdtempSync(join(tmpdir(), 'dueline-formation-'));
    const formation = new Formation(dir, await freePorts(3));
    formation.own(dir);
    mkdirSync(join(dir, 'xdg'), { recursive: true });
    formation.own(join(dir, 'xdg'));
    const { monitor } = formation;
    await formation.autoctl([
      'create',
      'monitor',
      '--pgdata',
      monitor.dir,
      '--pgport',
      String(monitor.port),
      '--hostname',
      '127.0.0.1',
      '--auth',
      'trust',
      '--no-ssl',
    ]);
    await formation.autoctl([
      'config',
      'set',
      '--pgdata',
      monitor.dir,
      'postgresql.listen_addresses',
      '127.0.0.1',
    ]);
    formation.start(monitor);
    await formation.waitForServer(monitor.port, 'pg_auto_failover');
    const admin = await formation.connect(monitor.port, 'pg_auto_failover');
    try {
      for (const [name, value] of Object.entries(MONITOR_SETTINGS)) {
        await admin.query(`ALTER SYSTEM SET ${name} = '${value}'`);
      }
      await admin.query('SELECT pg_reload_conf()');
    } finally {
      await admin.end();
    }
    for (const node of formation.nodes) {
      await formation.autoctl([
        'create',
        'postgres',
        '--pgdata',
        node.dir,
        '--pgport',
        String(node.port),
        '--hostname',
        '127.0.0.1',
        '--listen',
        '127.0.0.1',
        '--name',
        node.name,
        '--auth',
        'trust',
        '--no-ssl',
        '--dbname',
        'dueline',
        '--monitor',
        formation.monitorUrl(),
      ]);
      await formation.autoctl([
        'config',
        'set',
        '--pgdata',
        node.dir,
        'timeout.network_partition_timeout',
        KEEPER_NETWORK_PARTITION_TIMEOUT_S,
      ]);
      formation.start(node);
      log(`formation: ${node.name} on 127.0.0.1:${node.port} started`);
    }
    await formation.waitForStates({ node_1: 'primary', node_2: 'secondary' }, 60_000);
    return formation;
  }

  monitorUrl(): string {
    return `postgres://autoctl_node@127.0.0.1:${this.monitor.port}/pg_auto_failover`;
  }

  /** The multi-host URL dueline is given (the form `pg_autoctl show uri` prints). */
  databaseUrl(): string {
    const hosts = this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
    return `postgres://postgres@${hosts}/dueline?target_session_attrs=read-write`;
  }

  nodeUrl(node: FormationNode): string {
    return `postgres://postgres@127.0.0.1:${node.port}/dueline`;
  }

  /** The monitor's view: node name → { reported, assigned } state. */
  async states(): Promise<Record<string, { reported: string; assigned: string }>> {
    const client = await this.connect(this.monitor.port, 'pg_auto_failover');
    try {
      const { rows } = await client.query<{
        nodename: string;
        reportedstate: string;
        goalstate: string;
      }>('SELECT nodename, reportedstate, goalstate FROM pgautofailover.node');
      return Object.fromEntries(
        rows.map((r) => [r.nodename, { reported: r.reportedstate, assigned: r.goalstate }]),
      );
    } finally {
      await client.end();
    }
  }

  /** Waits until each named node reports (and is assigned) the given state. */
  async waitForStates(wanted: Record<string, string>, timeoutMs: number): Promise<void> {
    await eventually(
      async () => {
        const states = await this.states();
        for (const [name, state] of Object.entries(wanted)) {
          const s = states[name];
          if (!s || s.reported !== state || s.assigned !== state) {
            throw new Error(`formation: ${name} is ${JSON.stringify(s)}, waiting for ${state}`);
          }
        }
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** Which node the monitor has as primary now (primary or wait_primary), if any. */
  async primary(): Promise<FormationNode | null> {
    const states = await this.states();
    return (
      this.nodes.find((n) => ['primary', 'wait_primary'].includes(states[n.name]?.reported)) ?? null
    );
  }

  /**
   * Sends a signal to every process of a node: its keeper, its postmaster and every backend and
   * walsender (Postgres's children leave the postmaster's process group, so a group signal would
   * miss the very connections we hold). They are frozen first, so none forks or is reparented
   * while the signal goes out: SIGSTOP is the node cut off the network, SIGKILL the node gone.
   */
  signal(node: FormationNode, signal: NodeJS.Signals): void {
    if (!node.process?.pid) throw new Error(`${node.name} is not running`);
    const root = node.process.pid;
    if (signal !== 'SIGCONT') {
      for (let round = 0; round < 3; round++) {
        for (const pid of processTree(root)) sendSignal(pid, 'SIGSTOP');
      }
    }
    if (signal !== 'SIGSTOP') for (const pid of processTree(root)) sendSignal(pid, signal);
  }

  async stop(): Promise<void> {
    for (const node of [...this.nodes, this.monitor]) {
      const child = node.process;
      if (!child?.pid || child.exitCode !== null || child.signalCode !== null) continue;
      for (const pid of processTree(child.pid)) sendSignal(pid, 'SIGKILL');
    }
    // A postmaster that left its group (none does today) still dies, by the pid it wrote.
    for (const node of [...this.nodes, this.monitor]) {
      const pidFile = join(node.dir, 'postmaster.pid');
      if (!existsSync(pidFile)) continue;
      const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
      try {
        if (pid > 0) process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (!process.env.KEEP_FORMATION) rmSync(this.dir, { recursive: true, force: true });
  }

  async connect(port: number, database = 'dueline'): Promise<Client> {
    const client = new Client({
      connectionString: `postgres://postgres@127.0.0.1:${port}/${database}`,
      connectionTimeoutMillis: 2000,
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private async waitForServer(port: number, database: string): Promise<void> {
    await eventually(async () => (await this.connect(port, database)).end(), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
  }

  private start(node: FormationNode): void {
    const out = createWriteStream(join(this.dir, `${node.name}.log`));
    const [command, args] = this.asPostgres('pg_autoctl', ['run', '--pgdata', node.dir]);
    const child = spawn(command, args, {
      env: this.env(),
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(out);
    child.stderr?.pipe(out);
    node.process = child;
  }

  private async autoctl(args: string[]): Promise<void> {
    const [command, full] = this.asPostgres('pg_autoctl', args);
    try {
      await run(command, full, { env: this.env(), timeout: 120_000 });
    } catch (error) {
      const e = error as { stderr?: string; message: string };
      throw new Error(`pg_autoctl ${args.slice(0, 2).join(' ')} failed: ${e.stderr ?? e.message}`, {
        cause: error,
      });
    }
  }

  private env(): NodeJS.ProcessEnv {
    const xdg = join(this.dir, 'xdg');
    return {
      PATH: `${PG_BIN}:/usr/bin:/bin:/usr/sbin:/sbin`,
      HOME: xdg,
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_DATA_HOME: join(xdg, 'data'),
      XDG_RUNTIME_DIR: join(xdg, 'run'),
      PG_CONFIG: join(PG_BIN, 'pg_config'),
      LANG: 'C.UTF-8',
    };
  }

  /** As root, through runuser (Postgres refuses root); as anyone else, directly. */
  private asPostgres(command: string, args: string[]): [string, string[]] {
    if (process.getuid?.() !== 0) return [command, args];
    return ['runuser', ['-u', 'postgres', '-m', '--', command, ...args]];
  }

  private own(path: string): void {
    if (process.getuid?.() !== 0) return;
    const { uid, gid } = postgresUser();
    chownSync(path, uid, gid);
  }
}

let cachedUser: { uid: number; gid: number } | null = null;
function postgresUser(): { uid: number; gid: number } {
  if (cachedUser) return cachedUser;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l: string) => l.startsWith('postgres:'));
  if (!line) throw new Error('no postgres system user (the Debian postgresql package creates it)');
  const [, , uid, gid] = line.split(':');
  cachedUser = { uid: Number(uid), gid: Number(gid) };
  return cachedUser;
}

/** A process and all its descendants, from /proc (pids of processes this test started). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // exited meanwhile
    }
  }
  const tree: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    tree.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return tree;
}

function sendSignal(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}
