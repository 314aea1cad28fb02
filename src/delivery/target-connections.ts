import * as http from 'node:http';
import * as https from 'node:https';

/** How long a connection may sit idle in a pool: well under common servers' keep-alive (5 s+). */
const IDLE_MS = 2000;
/** Idle connections kept per target origin. */
const MAX_IDLE_PER_ORIGIN = 256;

/**
 * A worker's pools of connections to targets that deduplicate (see InvokeOptions.pools): a call
 * then costs no TCP (or TLS) set-up when a connection to the same origin is idle. Idle
 * connections close after IDLE_MS, so a target that closes idle connections itself rarely gets
 * the chance to close one under a request.
 */
export class TargetConnections {
  readonly http = new http.Agent({
    keepAlive: true,
    maxFreeSockets: MAX_IDLE_PER_ORIGIN,
    timeout: IDLE_MS,
    scheduling: 'lifo',
  });
  readonly https = new https.Agent({
    keepAlive: true,
    maxFreeSockets: MAX_IDLE_PER_ORIGIN,
    timeout: IDLE_MS,
    scheduling: 'lifo',
  });

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
