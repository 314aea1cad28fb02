import { Client } from 'pg';
import type { ExpectedOccurrence } from './analysis';

export interface LedgerVerdict {
  /** Undelivered, and the service still holds them: due entry not yet dispatched, or a run
   *  QUEUED / RUNNING / RETRY_WAIT. Late, not lost. */
  pending: number;
  /** Undelivered, and the service has nothing that will deliver them: no run and no due entry,
   *  or a run that ended (SUCCEEDED, FAILED, SKIPPED, …) without the sink ever seeing it. Lost,
   *  whatever the reason recorded (see `states`). */
  lost: number;
  /** States of the runs of the undelivered occurrences. */
  states: Record<string, number>;
}

const IN_FLIGHT = ['QUEUED', 'RUNNING', 'RETRY_WAIT', 'not dispatched yet'];

/**
 * Asks the service's own database what became of the occurrences the sink never received, before
 * the replicas stop: still in flight (late) or gone (lost). Without this, a bounded drain cannot
 * tell a backlog from a loss.
 */
export async function ledgerCheck(
  url: string,
  undelivered: readonly ExpectedOccurrence[],
  /** Whether the sink has it by now: the replicas keep delivering while the ledger is read. */
  receivedNow: (occurrence: ExpectedOccurrence) => boolean,
): Promise<LedgerVerdict> {
  const verdict: LedgerVerdict = { pending: 0, lost: 0, states: {} };
  if (undelivered.length === 0) return verdict;
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      n: string;
      state: string | null;
      reason: string | null;
      due_entry: boolean;
    }>(
      `SELECT x.n, o.state, o.reason,
              EXISTS (SELECT 1 FROM due_index d
                       WHERE d.schedule_id = x.schedule_id AND d.due_at <= x.at) AS due_entry
         FROM unnest($1::uuid[], $2::timestamptz[]) WITH ORDINALITY AS x(schedule_id, at, n)
         LEFT JOIN occurrences o ON o.schedule_id = x.schedule_id AND o.scheduled_at = x.at`,
      [undelivered.map((e) => e.scheduleId), undelivered.map((e) => new Date(e.at).toISOString())],
    );
    for (const row of rows) {
      let state = row.state ?? (row.due_entry ? 'not dispatched yet' : 'missing');
      if (row.state === 'SKIPPED' || row.state === 'FAILED') state = `${row.state} (${row.reason})`;
      // A run that ended while we looked: the sink records a request before answering it, so an
      // ended run it did receive is in the sink by now. Delivered after the drain: late.
      if (!IN_FLIGHT.includes(state) && receivedNow(undelivered[Number(row.n) - 1])) {
        state = 'delivered after the drain';
      }
      verdict.states[state] = (verdict.states[state] ?? 0) + 1;
      if (IN_FLIGHT.includes(state) || state === 'delivered after the drain') verdict.pending++;
      else verdict.lost++;
    }
  } finally {
    await client.end();
  }
  return verdict;
}
