import { Socket } from 'node:net';
import { Client, type ClientConfig, type QueryResult } from 'pg';
import { isSocketDirectory } from './database-address';
import { PrimaryLocator, ReadOnlyServerError } from './primary-locator';
import { PREPARE_WRITE_SESSION } from './primary.sql';
import { countRoundTrip, countWait } from './round-trips';

type Query = (this: Client, ...args: unknown[]) => unknown;
const clientQuery = Client.prototype.query as unknown as Query;

/** A plain config object naming its statement (not a Submittable such as a cursor). */
function isNamedStatement(config: unknown): config is { name: string; text: string } {
  if (typeof config !== 'object' || config === null) return false;
  const { name, text, submit } = config as { name?: unknown; text?: unknown; submit?: unknown };
  return (
    typeof name === 'string' && name !== '' && typeof text === 'string' && submit === undefined
  );
}

/**
 * 0A000 (feature_not_supported) from a named statement: Postgres's "cached plan must not change
 * result type". The code alone decides, not the message, which a server translates under its
 * lc_messages; another 0A000 of a named statement only makes it run unnamed, which is harmless.
 */
function isResultTypeChange(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '0A000';
}

/** The pg options every dueline connection is made with: the locator travels with them. */
export interface PrimaryClientConfig extends ClientConfig {
  primaryLocator: PrimaryLocator;
}

/**
 * A `pg` client that connects to the locator's writable server and refuses any server that does
 * not take writes (the read-write check libpq makes for `target_session_attrs=read-write`).
 * Pools take it as their `Client` (pg-pool's option), so every pooled connection of TypeORM and
 * pg-boss goes through it; the locator can cut it when its server stops being the primary.
 */
export class PrimaryClient extends Client {
  private readonly locator: PrimaryLocator;
  /**
   * Texts whose named statement this connection may no longer run (see query): unnamed here
   * from then on, parsed and planned at every call like any unnamed statement.
   */
  private readonly unprepared = new Set<string>();
  /** Statements written and not yet answered (a ReadyForQuery each): see countWait. */
  private inFlight = 0;
  /** The socket holds this tick's writes back (see holdWritesForThisTick). */
  private holding = false;

  constructor(config: PrimaryClientConfig) {
    // `stream` is for clients that cannot be a PrimaryClient (see primarySocket).
    super({ ...config, stream: undefined });
    this.locator = config.primaryLocator;
    // ReadyForQuery ends every round trip (simple query or extended-protocol Sync).
    this.connection.on('readyForQuery', () => {
      countRoundTrip();
      if (this.inFlight > 0) this.inFlight--;
    });
    // A connection lost while it is checked out but between queries (a transaction between
    // statements; the server shut down or failed over) emits 'error' with nobody listening:
    // pg-pool listens only while a client is idle, TypeORM not at all, and an unheard 'error'
    // ends the process. The loss is reported where it matters anyway: the next query on this
    // client fails (and with it the transaction), and the pool discards the client at release.
    this.on('error', () => undefined);
  }

  /**
   * A named statement whose result columns changed under it (a migration added a column that
   * its `*` covers, applied by a newer replica while this one runs) fails on this connection
   * with 0A000, "cached plan must not change result type", and would at every later call: the
   * server keeps the statement as it was prepared, and TypeORM keeps its connections (pg-pool's
   * own `pool.query` discards a connection whose statement failed; a checked-out one is kept).
   * That one call fails (its transaction is rolled back and retried by its caller as after any
   * failure); the text then runs unnamed on this connection. Other connections find out the
   * same way, once each.
   */
  // pg's query() has a dozen overloads; this one only looks at a named config object.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override query(...args: any[]): any {
    // Without pipelining a statement is written only once the one before it is answered.
    if (this.inFlight++ === 0 || !this.pipeline) countWait();
    this.holdWritesForThisTick();
    const [config] = args as unknown[];
    if (!isNamedStatement(config)) return clientQuery.apply(this, args);
    if (this.unprepared.has(config.text)) {
      return clientQuery.call(this, { ...config, name: undefined }, ...args.slice(1));
    }
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (error: unknown, result: unknown) => void;
      return clientQuery.call(this, ...args.slice(0, last), (error: unknown, result: unknown) => {
        if (error) this.noteFailure(config.text, error);
        callback(error, result);
      });
    }
    return (clientQuery.apply(this, args) as Promise<unknown>).catch((error: unknown) => {
      this.noteFailure(config.text, error);
      throw error;
    });
  }

  /**
   * The statements written by one stretch of synchronous code leave in one socket write: a
   * transaction's BEGIN with its first statement, the statements a repository sends together,
   * the last ones with the COMMIT. pg writes each statement's messages as soon as it is called,
   * one socket write each, and every write wakes the server's process for that statement alone;
   * on a 2-core host the statements of a run cost as many wake-ups as writes. Held only until
   * that code ends (process.nextTick; inside a promise job, once the promise jobs queued then
   * have run too), so no statement waits for anything but the code that writes the ones beside
   * it.
   */
  private holdWritesForThisTick(): void {
    const socket = this.connection.stream as Partial<Socket>;
    if (this.holding || typeof socket.cork !== 'function') return;
    this.holding = true;
    socket.cork();
    process.nextTick(() => {
      this.holding = false;
      socket.uncork?.();
    });
  }

  private noteFailure(text: string, error: unknown): void {
    if (isResultTypeChange(error)) this.unprepared.add(text);
  }

  override connect(): Promise<Client>;
  override connect(callback: (err: Error | null, client?: Client) => void): void;
  override connect(
    callback?: (err: Error | null, client?: Client) => void,
  ): Promise<Client> | void {
    const connecting = this.connectToPrimary();
    if (!callback) return connecting;
    connecting.then(
      (client) => callback(null, client),
      (error: Error) => callback(error),
    );
  }

  private async connectToPrimary(): Promise<Client> {
    const host = await this.locator.locate();
    this.host = host.host;
    this.port = host.port;
    try {
      await super.connect();
    } catch (error) {
      this.locator.forget(host);
      throw error;
    }
    const untrack = this.locator.track(host, {
      destroy: (reason) => this.connection.stream.destroy(reason),
    });
    this.once('end', untrack);
    let writable: boolean;
    try {
      const session = (await this.query(PREPARE_WRITE_SESSION)) as QueryResult<{
        writable: boolean;
      }>;
      writable = session.rows[0].writable;
    } catch (error) {
      this.locator.forget(host);
      await this.end().catch(() => undefined);
      throw error;
    }
    if (!writable) {
      this.locator.forget(host);
      await this.end().catch(() => undefined);
      throw new ReadOnlyServerError(host);
    }
    return this as Client;
  }
}

/**
 * A socket that dials the locator's writable server whatever address it is given. It is for the
 * one connection we cannot build ourselves: pg-boss's LISTEN client (`new pg.Client(config)`
 * inside pg-boss) takes its socket from the `stream` option. A standby refuses LISTEN, so it
 * cannot listen on a read-only server either; the locator cuts it like the others.
 */
export function primarySocket(locator: PrimaryLocator): () => Socket {
  return () => new PrimarySocket(locator);
}

class PrimarySocket extends Socket {
  constructor(private readonly locator: PrimaryLocator) {
    super();
  }

  override connect(...ignored: unknown[]): this {
    void ignored;
    this.locator.locate().then(
      (host) => {
        if (this.destroyed) return;
        const untrack = this.locator.track(host, { destroy: (reason) => this.destroy(reason) });
        this.once('close', untrack);
        this.once('error', () => this.locator.forget(host));
        // A socket directory holds the server's Unix socket, named as pg's own client names it.
        if (isSocketDirectory(host)) super.connect(`${host.host}/.s.PGSQL.${host.port}`);
        else super.connect(host.port, host.host);
      },
      (error: Error) => this.destroy(error),
    );
    return this;
  }
}

/**
 * How long a pooled connection may sit idle by default: five minutes, where pg-pool's own ten
 * seconds closed every connection a burst opened before the next minute's burst, which then paid
 * for new server processes (each ~25 ms of Postgres CPU on the bench host to load its caches and
 * plan its prepared statements) just as its runs fell due.
 */
export const DEFAULT_POOL_IDLE_MS = 300_000;

/** Pool options (pg-pool, as TypeORM's `extra` and pg-boss's config) for the locator's primary. */
export function primaryPoolOptions(
  locator: PrimaryLocator,
  connectTimeoutMs: number,
  idleTimeoutMs: number = DEFAULT_POOL_IDLE_MS,
) {
  return {
    Client: PrimaryClient,
    primaryLocator: locator,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: idleTimeoutMs,
  };
}
