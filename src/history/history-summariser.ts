import type { Tx } from '../database';

/**
 * Keeps what must outlive a history partition: called with the range of a partition about to
 * be dropped, inside the transaction that drops it (so summaries and the drop commit or roll
 * back together, and a summary never counts rows that are still there or misses rows that are
 * gone). The history module provides the run summaries' RunSummariser under HISTORY_SUMMARISER
 * (an interface and a token, so a test can observe the call).
 */
export interface HistorySummariser {
  summariseRange(tx: Tx, from: Date, to: Date): Promise<void>;
}

/** The Nest provider token of the HistorySummariser. */
export const HISTORY_SUMMARISER = Symbol('HISTORY_SUMMARISER');
