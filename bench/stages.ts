import { Client } from 'pg';

export interface StageLags {
  /** Occurrence row committed (the poller's dispatch) minus the nominal instant, ms. */
  createdP50: number;
  createdP99: number;
  /**
   * Admission (the run may take its permit and its job is published) minus the nominal instant,
   * ms; the same as created for a run admitted as it is written.
   */
  admittedP50: number;
  admittedP99: number;
  /** First attempt's claim minus the nominal instant, ms. */
  claimedP50: number;
  claimedP99: number;
}

/**
 * Where the lag goes, from the service's own ledger: when each run's row was created (dispatch),
 * admitted and its first attempt claimed, against its nominal instant. The sink's receipt is
 * the third point; the gaps between them say which stage to look at.
 */
export async function stageLags(
  url: string,
  judged: { from: number; to: number },
): Promise<StageLags | null> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      created_p50: number | null;
      created_p99: number | null;
      admitted_p50: number | null;
      admitted_p99: number | null;
      claimed_p50: number | null;
      claimed_p99: number | null;
    }>(
      `WITH lags AS (
         SELECT extract(epoch FROM o.created_at - o.scheduled_at) * 1000 AS created,
                extract(epoch FROM o.admitted_at - o.scheduled_at) * 1000 AS admitted,
                extract(epoch FROM a.started_at - o.scheduled_at) * 1000 AS claimed
           FROM occurrences o
           LEFT JOIN attempts a ON a.run_id = o.id AND a.attempt_no = 1
          WHERE o.scheduled_at >= $1 AND o.scheduled_at < $2)
       SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY created)::float8 AS created_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY created)::float8 AS created_p99,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY admitted)::float8 AS admitted_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY admitted)::float8 AS admitted_p99,
              percentile_cont(0.5) WITHIN GROUP (ORDER BY claimed)::float8 AS claimed_p50,
              percentile_cont(0.99) WITHIN GROUP (ORDER BY claimed)::float8 AS claimed_p99
         FROM lags`,
      [new Date(judged.from), new Date(judged.to)],
    );
    const [row] = rows;
    if (!row || row.created_p50 === null || row.claimed_p50 === null) return null;
    const round = (ms: number | null) => Math.round((ms ?? 0) * 10) / 10;
    return {
      createdP50: round(row.created_p50),
      createdP99: round(row.created_p99),
      admittedP50: round(row.admitted_p50),
      admittedP99: round(row.admitted_p99),
      claimedP50: round(row.claimed_p50),
      claimedP99: round(row.claimed_p99),
    };
  } finally {
    await client.end();
  }
}

export function describeStages(s: StageLags): string {
  return (
    `stages: dispatched p50/p99 ${s.createdP50}/${s.createdP99} ms, ` +
    `admitted ${s.admittedP50}/${s.admittedP99} ms, ` +
    `claimed ${s.claimedP50}/${s.claimedP99} ms after the instant`
  );
}
