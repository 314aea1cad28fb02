import { describeHost, type DatabaseAddress, type HostPort } from './database-address';

export type ProbeResult = 'writable' | 'read-only' | 'unreachable';

/** Asks servers, each within a bound, whether they take writes (see SESSION_IS_WRITABLE). */
export interface HostProbe {
  ask(host: HostPort): Promise<ProbeResult>;
  /**
   * Whether to keep a connection open between questions (while the locator asks every
   * interval); false also closes what is kept.
   */
  keepConnections(keep: boolean): void;
}

/** A connection the locator may have to cut when its server stops being the primary. */
export interface TrackedConnection {
  destroy(reason: Error): void;
}

export interface PrimaryLocatorOptions {
  /** How often the server in use is asked again whether it is still the writable one. */
  checkIntervalMs: number;
  /** Where a change of primary is told (the app's logger; silent for a one-off migration). */
  logger?: LocatorLogger;
}

export interface LocatorLogger {
  log(message: object, context: string): void;
  warn(message: object, context: string): void;
  debug(message: object, context: string): void;
}

const SILENT: LocatorLogger = {
  log: () => undefined,
  warn: () => undefined,
  debug: () => undefined,
};

/** No server of the URL takes writes now (all down, all standbys, or a failover under way). */
export class NoWritableHostError extends Error {
  readonly code = 'DUELINE_NO_WRITABLE_HOST';
  constructor(address: DatabaseAddress, results: readonly ProbeResult[]) {
    super(
      `no writable server among ${address.hosts
        .map((h, i) => `${describeHost(h)} (${results[i]})`)
        .join(', ')}`,
    );
  }
}

/** A server that was writable when located answered read-only on a new connection. */
export class ReadOnlyServerError extends Error {
  readonly code = 'DUELINE_READ_ONLY_SERVER';
  constructor(host: HostPort) {
    super(`${describeHost(host)} does not take writes (standby or read-only); refusing it`);
  }
}

/** The connection was cut because its server is no longer the writable one. */
export class PrimaryLostError extends Error {
  readonly code = 'DUELINE_PRIMARY_LOST';
  constructor(host: HostPort, why: string) {
    super(`${describeHost(host)} is no longer the writable server (${why}); connection closed`);
  }
}

/**
 * Finds the writable server of a multi-host DATABASE_URL, as libpq's
 * `target_session_attrs=read-write` would (the first host, in URL order, that takes writes),
 * and keeps finding it: `pg` has no multi-host support, so every connection dueline opens (the
 * TypeORM pool, pg-boss's pool and LISTEN client, the poller's LISTEN client) asks `locate()`
 * for its server and reports a server that failed it (`forget`).
 *
 * The hosts are probed in parallel, each within the probe's own bound, so a server that hangs
 * (stopped, or its network cut) delays the answer by one bound rather than one per retry.
 * While in use, the server is asked again every `checkIntervalMs` (over the probe's kept
 * connection: PrimaryProbe); once it stops answering or turns read-only (demoted after a
 * failover), the connections to it are cut: their statements fail at once instead of hanging on
 * a server that will never answer, and the next connection locates the new primary.
 */
export class PrimaryLocator {
  private readonly logger: LocatorLogger;
  private current: HostPort | null = null;
  private locating: Promise<HostPort> | null = null;
  private readonly connections = new Map<string, Set<TrackedConnection>>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  /** Whether a located primary was lost since start (a later one is worth an info line). */
  private lostOne = false;

  constructor(
    readonly address: DatabaseAddress,
    private readonly probe: HostProbe,
    private readonly options: PrimaryLocatorOptions,
  ) {
    this.logger = options.logger ?? SILENT;
  }

  /** The writable server: the one in use, or the first in URL order that takes writes now. */
  locate(): Promise<HostPort> {
    if (this.current) return Promise.resolve(this.current);
    this.locating ??= this.search().finally(() => (this.locating = null));
    return this.locating;
  }

  /** The server in use, if one is known (for readiness and logs). */
  known(): HostPort | null {
    return this.current;
  }

  /** A connection to `host` failed or found it read-only: look again next time. */
  forget(host: HostPort): void {
    if (this.current && sameHost(this.current, host)) {
      this.logger.warn({ host: describeHost(host) }, 'database server lost; locating the primary');
      this.current = null;
      this.lostOne = true;
    }
  }

  /** Remembers an open connection to `host`; returns what to call once it is closed. */
  track(host: HostPort, connection: TrackedConnection): () => void {
    const key = describeHost(host);
    let set = this.connections.get(key);
    if (!set) this.connections.set(key, (set = new Set()));
    set.add(connection);
    return () => set.delete(connection);
  }

  /** Starts asking the server in use whether it is still the primary. */
  start(): void {
    if (this.timer) return;
    this.probe.keepConnections(true);
    this.timer = setInterval(() => void this.check(), this.options.checkIntervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.probe.keepConnections(false);
  }

  /** One check of the server in use (exposed for tests; the timer calls it). */
  async check(): Promise<void> {
    const host = this.current;
    if (!host || this.checking) return;
    this.checking = true;
    try {
      const result = await this.probe.ask(host);
      if (result === 'writable') return;
      this.forget(host);
      this.cut(host, result);
    } finally {
      this.checking = false;
    }
  }

  private async search(): Promise<HostPort> {
    const { hosts } = this.address;
    const probes = hosts.map((host) => this.probe.ask(host));
    const results: ProbeResult[] = [];
    // URL order decides among writable servers (libpq's rule), so a later host that answers
    // first still waits for the earlier ones' answers, each bounded by the probe.
    for (let i = 0; i < hosts.length; i++) {
      results.push(await probes[i]);
      if (results[i] === 'writable') {
        const found = hosts[i];
        // A server we cut connections to may be chosen again only by a fresh probe, as here.
        this.current = found;
        if (this.lostOne)
          this.logger.log({ host: describeHost(found) }, 'database primary located');
        else this.logger.debug({ host: describeHost(found) }, 'database primary located');
        // The losing servers' connections (a demoted old primary) must not linger in pools.
        for (const other of hosts) {
          if (!sameHost(other, found)) this.cut(other, `${describeHost(found)} is the primary`);
        }
        return found;
      }
    }
    throw new NoWritableHostError(this.address, results);
  }

  private cut(host: HostPort, why: string): void {
    const set = this.connections.get(describeHost(host));
    if (!set || set.size === 0) return;
    const reason = new PrimaryLostError(host, why);
    for (const connection of [...set]) connection.destroy(reason);
    set.clear();
  }
}

function sameHost(a: HostPort, b: HostPort): boolean {
  return a.host === b.host && a.port === b.port;
}
