import type { HandedOffJob } from '../queue';

/**
 * Free worker slots as a receiver last knew them: `high` runs may take any free slot, the others
 * only those outside the share reserved for `high` runs (WORKER_RESERVED_HIGH_SHARE).
 */
export interface HandoffRoom {
  high: number;
  other: number;
}

export const NO_ROOM: HandoffRoom = { high: 0, other: 0 };

/**
 * The room `capacity` leaves once `used` is taken: every slot counts against `high` runs, only
 * the other lane's against the others (never more than is free at all). The one rule for a
 * worker's own slots (WorkerSlots) and for a pool child as the poller estimates it.
 */
export function roomLeft(capacity: HandoffRoom, used: HandoffRoom): HandoffRoom {
  const high = capacity.high - used.high - used.other;
  return { high, other: Math.min(high, capacity.other - used.other) };
}

/**
 * A worker beside the poller that takes dispatched runs directly: the worker role in this
 * process, or a worker process of this service's pool (over its IPC channel).
 */
export interface HandoffReceiver {
  /** Its free slots as far as this process knows now. */
  room(): HandoffRoom;
  /**
   * Hands it committed jobs. Fire and forget: a job it does not claim (it died, it was stopping,
   * it found no room in time) is any worker's once its grace ends.
   */
  take(jobs: readonly HandedOffJob[]): void;
}
