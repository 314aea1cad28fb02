import type { HandoffRoom } from '../handoff';
import type { HandedOffJob } from '../queue';
import { isPoolMessage, type PoolMessage, type ProcessMetrics } from './pool-message';

/** The child's end of the IPC channel (the `process` object of a forked child). */
export interface PoolChannel {
  send?: (message: PoolMessage) => boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  once(event: 'disconnect', listener: () => void): unknown;
  readonly connected?: boolean;
}

export interface PoolChildOptions {
  /** The child's worker id, as its attempts record it. */
  workerId: string;
  /** This process's metrics, for the primary's `/metrics`. */
  metrics: () => Promise<ProcessMetrics>;
  /**
   * The primary is gone (its channel closed: it exited or was killed). The child must drain
   * and exit: nothing would restart, stop or scrape it any more.
   */
  onPrimaryLost: () => void;
  /** Runs the primary's poller hands this worker (see handoff/). */
  onHandoff: (jobs: readonly HandedOffJob[]) => void;
  /** Starts reporting this worker's room, through `report`, for the primary's handoffs. */
  reportRoom: (report: (room: HandoffRoom) => void) => void;
}

/**
 * A worker process's side of the pool: answers the primary's metrics requests, takes the runs it
 * hands over and reports its room for them, says it is ready, and reports a lost primary. Call
 * once the worker role consumes jobs.
 */
export function joinPool(channel: PoolChannel, options: PoolChildOptions): void {
  channel.on('message', (message) => {
    if (!isPoolMessage(message)) return;
    if (message.kind === 'handoff.jobs') {
      options.onHandoff(message.jobs);
      return;
    }
    if (message.kind !== 'metrics.request') return;
    options.metrics().then(
      (metrics) => {
        if (channel.connected) channel.send?.({ kind: 'metrics.reply', id: message.id, metrics });
      },
      () => undefined, // the primary leaves this child out of that scrape
    );
  });
  channel.once('disconnect', options.onPrimaryLost);
  if (!channel.connected) {
    options.onPrimaryLost();
    return;
  }
  channel.send?.({ kind: 'ready', workerId: options.workerId });
  options.reportRoom((room) => {
    if (channel.connected) channel.send?.({ kind: 'handoff.room', room });
  });
}
