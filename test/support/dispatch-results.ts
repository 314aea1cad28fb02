import type { DispatchResult } from '../../src/poller';

/** What a poller batch that took `entries` due entries answers, for the lanes' unit tests. */
export const servedBatch = (entries: number): DispatchResult => ({
  entries,
  lastDueAtExact: null,
  dropped: 0,
  created: [],
  published: 0,
  now: new Date(0),
});
