import { Client } from 'pg';

/**
 * Where a window's WAL went, by table and record kind: the WAL records between two positions
 * (pg_walinspect's pg_get_wal_block_info, PostgreSQL 16+), each block's record and full-page
 * image attributed to the table it touched, partitions and their indexes counted under their
 * roots (occurrences_p20261205_0000_pkey is `occurrences_pkey`'s). A record is counted once, at
 * its first block; its other blocks add only their full-page images. Records that touch no block
 * (commits, for one) are not in that view, so the shares add up to a little less than the WAL
 * the cost line reports. Reads the window's WAL again, so it runs after the window, on request
 * (BENCH_COST_DEBUG), never inside one.
 */
const WAL_BY_TABLE = `
  WITH blocks AS (
    SELECT w.relfilenode, w.resource_manager || '/' || split_part(w.record_type, ' ', 1) AS kind,
           CASE WHEN w.block_id = min(w.block_id) OVER (PARTITION BY w.start_lsn)
                THEN w.record_length ELSE 0 END
             + coalesce(w.block_fpi_length, 0) AS bytes,
           w.block_id = min(w.block_id) OVER (PARTITION BY w.start_lsn) AS counted
      FROM pg_get_wal_block_info($1::pg_lsn, $2::pg_lsn) w
     WHERE w.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
  )
  SELECT coalesce(root.relname, c.relname, b.relfilenode::text) AS relation, b.kind,
         count(*) FILTER (WHERE b.counted)::float8 AS records, sum(b.bytes)::float8 AS bytes
    FROM blocks b
    LEFT JOIN pg_class c ON c.relfilenode = b.relfilenode AND b.relfilenode <> 0
    LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
    LEFT JOIN pg_class root ON root.oid = coalesce(pg_partition_root(c.oid), i.inhparent)
   GROUP BY 1, 2
   ORDER BY 4 DESC
   LIMIT $3`;

export interface WalShare {
  relation: string;
  kind: string;
  recordsPerRun: number;
  bytesPerRun: number;
}

/**
 * The largest shares of the WAL written between `from` and `to`, per run, in the database at
 * `url`; null when the server cannot tell (pg_walinspect missing, PostgreSQL before 16).
 */
export async function walBreakdown(
  url: string,
  from: string,
  to: string,
  runs: number,
  limit = 20,
): Promise<WalShare[] | null> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
    const { rows } = await client.query<{
      relation: string;
      kind: string;
      records: number;
      bytes: number;
    }>(WAL_BY_TABLE, [from, to, limit]);
    const per = (x: number) => Math.round((x / Math.max(1, runs)) * 100) / 100;
    return rows.map((r) => ({
      relation: r.relation,
      kind: r.kind,
      recordsPerRun: per(r.records),
      bytesPerRun: per(r.bytes),
    }));
  } catch (error) {
    console.log(`    WAL breakdown unavailable: ${(error as Error).message}`);
    return null;
  } finally {
    await client.end();
  }
}

/** Lines for the progress output, largest first. */
export function describeWalShares(shares: readonly WalShare[]): string[] {
  return shares.map(
    (s) =>
      `    WAL ${s.bytesPerRun.toFixed(1).padStart(7)} B/run in ${s.recordsPerRun.toFixed(2)} records: ${s.kind} ${s.relation}`,
  );
}
