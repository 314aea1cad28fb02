import type { Socket } from 'node:net';
import { Client } from 'pg';
import { describeHost, urlFor, type DatabaseAddress, type HostPort } from './database-address';
import type { HostProbe, ProbeResult } from './primary-locator';
import { SESSION_IS_WRITABLE } from './primary.sql';

/** The probe's sessions, as `pg_stat_activity` shows them. */
export const PROBE_APPLICATION_NAME = 'dueline-primary-probe';

/**
 * The locator's probe: asks a server whether it takes writes, over a connection of its own (never
 * a pooled one: pooled connections are what a lost primary must not keep), and keeps the
 * connection to a server that answered writable for the next question. The locator asks the
 * server in use every DATABASE_PRIMARY_CHECK_INTERVAL_MS (a second), in every process; a new
 * connection for each question made the server start a process for it each time, about 20 ms
 * of its CPU on the bench host: an idle service of two processes cost Postgres 60 ms of CPU a
 * second, 25 ms with the connections kept. A kept session answers as a new one would
 * (SESSION_IS_WRITABLE reads what a new session would apply).
 *
 * The bound of one question (`timeoutMs`) is what it always was: a server that does not answer
 * within it counts as unreachable. Half of it goes to the kept session; if that session fails or
 * is silent (the server ended it: a restart, an idle-session timeout, an operator's
 * pg_terminate_backend), a new connection gets the rest, so a session lost on its own never
 * makes a live primary look lost. A connection that answered anything but writable is closed.
 */
export class PrimaryProbe implements HostProbe {
  /** Connections idle between questions, one per server that last answered writable. */
  private readonly kept = new Map<string, Client>();
  /** Only while the locator checks the server in use: a one-off locate() keeps nothing. */
  private keeping = false;

  constructor(
    private readonly address: DatabaseAddress,
    private readonly timeoutMs: number,
  ) {}

  async ask(host: HostPort): Promise<ProbeResult> {
    const key = describeHost(host);
    const deadline = Date.now() + this.timeoutMs;
    // Taken out while it is asked, so a question asked meanwhile opens a connection of its own.
    const reused = this.kept.get(key);
    this.kept.delete(key);
    if (reused) {
      const halfway = Date.now() + this.timeoutMs / 2;
      const answer = await this.askOver(reused, halfway, false);
      if (answer !== 'unreachable') return this.settle(key, reused, answer);
      drop(reused);
    }
    const fresh = new Client({
      connectionString: urlFor(this.address, host),
      connectionTimeoutMillis: Math.max(1, deadline - Date.now()),
      application_name: PROBE_APPLICATION_NAME,
    });
    fresh.on('error', () => undefined);
    // A session the server ends while it is kept is not asked again.
    fresh.once('end', () => {
      if (this.kept.get(key) === fresh) this.kept.delete(key);
    });
    return this.settle(key, fresh, await this.askOver(fresh, deadline, true));
  }

  keepConnections(keep: boolean): void {
    this.keeping = keep;
    if (keep) return;
    for (const client of this.kept.values()) drop(client);
    this.kept.clear();
  }

  private async askOver(client: Client, deadline: number, connect: boolean): Promise<ProbeResult> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<ProbeResult>((resolve) => {
      timer = setTimeout(() => resolve('unreachable'), Math.max(0, deadline - Date.now()));
    });
    const asked = (async (): Promise<ProbeResult> => {
      if (connect) {
        await client.connect();
        // A kept probe never holds the process open (the locator's stop closes it anyway).
        (client.connection.stream as Partial<Socket>).unref?.();
      }
      // Named: a kept session plans it once (0.6 ms a question planned each time, 0.2 once).
      const { rows } = await client.query<{ writable: boolean }>({
        name: PROBE_APPLICATION_NAME,
        text: SESSION_IS_WRITABLE,
      });
      return rows[0].writable ? 'writable' : 'read-only';
    })().catch((): ProbeResult => 'unreachable');
    try {
      return await Promise.race([asked, silent]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Keeps the connection for the next question if the server took writes; closes it if not. */
  private settle(key: string, client: Client, answer: ProbeResult): ProbeResult {
    if (answer === 'writable' && this.keeping && !this.kept.has(key)) {
      this.kept.set(key, client);
    } else {
      drop(client);
    }
    return answer;
  }
}

/** Never waits on a server that does not answer: drops the socket. */
function drop(client: Client): void {
  client.connection.stream.destroy();
}
