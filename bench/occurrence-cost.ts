import { Client } from 'pg';
import { PGBOSS_SCHEMA } from '../src/queue';
import { costBetween, type CostReading, type OccurrenceCost } from './cost-arithmetic';
import type { PgServer } from './postgres';
import { postgresCpuSeconds } from './proc-stats';
import type { Receipt } from './sink';
import { describeWalShares, walBreakdown } from './wal-breakdown';

/** The tables (partition roots) whose rows are the run history. */
const HISTORY_TABLES = ['occurrences', 'attempts'];

/**
 * Every table of ours and pg-boss's, with indexes and TOAST, grouped by what it holds. A partition
 * counts towards its root (pg_partition_root), so partitioned history and pg-boss's per-queue
 * partitions add up under one name; a partitioned parent has no storage of its own.
 */
const RELATION_BYTES = `
  SELECT CASE WHEN n.nspname = $1 THEN 'queue'
              WHEN root.relname = ANY($2::text[]) THEN 'history'
              ELSE 'other' END AS grp,
         coalesce(sum(pg_total_relation_size(c.oid)), 0)::float8 AS bytes
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_class root ON root.oid = coalesce(pg_partition_root(c.oid), c.oid)
   WHERE n.nspname IN ('public', $1) AND c.relkind IN ('r', 'm')
   GROUP BY 1`;

const WAL = `
  SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS lsn,
         pg_current_wal_lsn()::text AS position,
         (SELECT wal_records::float8 FROM pg_stat_wal) AS records,
         (SELECT wal_fpi::float8 FROM pg_stat_wal) AS fpi`;

const TRANSACTIONS = `
  SELECT (xact_commit + xact_rollback)::float8 AS n FROM pg_stat_database WHERE datname = $1`;

/**
 * Statements of the database under test, split: what clients sent, and the foreign-key checks
 * Postgres runs itself for every inserted or updated referencing row (RI trigger queries, which
 * pg_stat_statements lists as top-level statements of their own).
 */
const STATEMENTS = `
  SELECT coalesce(sum(calls) FILTER (WHERE NOT fk), 0)::float8 AS n,
         coalesce(sum(calls) FILTER (WHERE fk), 0)::float8 AS fk
    FROM (SELECT calls, query LIKE 'SELECT $_ FROM ONLY % FOR KEY SHARE OF x' AS fk
            FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
           WHERE d.datname = $1) q`;

/**
 * With BENCH_COST_DEBUG set, the database's statements in `order`, the first `limit`: those that
 * took the most time, planning included (track_planning is on in the bench's server), say where
 * the database time goes; those called most often, what a run's round trips are made of.
 */
const topStatements = (order: string, limit: number) => `
  SELECT calls::float8 AS calls, round(total_exec_time)::int AS exec_ms,
         round(total_plan_time)::int AS plan_ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 160) AS query
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
   WHERE d.datname = $1 ORDER BY ${order} DESC LIMIT ${limit}`;
const TOP_STATEMENTS = topStatements('total_exec_time + total_plan_time', 14);
const MOST_CALLED = topStatements('calls', 40);

/** What the clients under test have asked of Postgres so far: round trips, and the waits they took. */
export interface Traffic {
  roundTrips: number;
  /** Statements written with nothing else in flight on their connection (see the service's metric). */
  waits: number;
}

/** Where the traffic of the clients under test comes from at a reading. */
export type TrafficSource = () => Promise<Traffic | null>;

/** A reading, and where the WAL stood at it (the breakdown's window, BENCH_COST_DEBUG). */
interface MeterReading extends CostReading {
  walPosition: string;
}

/**
 * Meters the cost of one occurrence over a window: `start()` and `stop(runs)` read Postgres's CPU
 * time from /proc (postmaster and all its processes: backends, autovacuum, checkpointer, WAL
 * writer), the WAL position and pg_stat_wal, the statements (pg_stat_statements) and transactions
 * (pg_stat_database) of the database under test, the clients' round trips, and the relation
 * sizes; the differences are divided by the runs delivered in the window. WAL and CPU are
 * cluster-wide: one scenario runs at a time on the bench's server, so they are the scenario's.
 * The meter's own handful of statements per reading is counted too (noise below 0.01 per run).
 */
export class OccurrenceCostMeter {
  private first: MeterReading | null = null;
  private startedAt = 0;

  constructor(
    private readonly pg: PgServer,
    private readonly database: { name: string; url: string },
    private readonly traffic: TrafficSource,
  ) {}

  async start(): Promise<void> {
    this.startedAt = performance.now();
    this.first = await this.read();
  }

  async stop(runs: number, serviceCpuSeconds: number | null): Promise<OccurrenceCost> {
    if (!this.first) throw new Error('OccurrenceCostMeter.stop() before start()');
    const last = await this.read();
    if (process.env.BENCH_COST_DEBUG) {
      const shares = await walBreakdown(
        this.database.url,
        this.first.walPosition,
        last.walPosition,
        runs,
      );
      if (shares) for (const line of describeWalShares(shares)) console.log(line);
    }
    return costBetween(this.first, last, {
      runs,
      seconds: Math.round((performance.now() - this.startedAt) / 100) / 10,
      serviceCpuSeconds,
    });
  }

  async read(): Promise<MeterReading> {
    const admin = new Client({ connectionString: this.pg.url });
    const db = new Client({ connectionString: this.database.url });
    await Promise.all([admin.connect(), db.connect()]);
    try {
      // One query at a time per client (pg deprecates overlapping queries on one connection).
      const wal = await admin.query<{
        lsn: number;
        position: string;
        records: number | null;
        fpi: number | null;
      }>(WAL);
      const xacts = await admin.query<{ n: number }>(TRANSACTIONS, [this.database.name]);
      const statements = this.pg.statementStats
        ? await admin.query<{ n: number; fk: number }>(STATEMENTS, [this.database.name])
        : null;
      if (this.pg.statementStats && process.env.BENCH_COST_DEBUG) {
        const top = await admin.query<{
          calls: number;
          exec_ms: number;
          plan_ms: number;
          query: string;
        }>(TOP_STATEMENTS, [this.database.name]);
        const called = await admin.query<(typeof top.rows)[number]>(MOST_CALLED, [
          this.database.name,
        ]);
        for (const [title, rows] of [
          ['most time', top.rows],
          ['most calls', called.rows],
        ] as const) {
          console.log(`    statements, ${title} (cumulative):`);
          for (const t of rows)
            console.log(`    ${t.calls} × exec ${t.exec_ms} ms, plan ${t.plan_ms} ms: ${t.query}`);
        }
      }
      const sizes = await db.query<{ grp: 'history' | 'queue' | 'other'; bytes: number }>(
        RELATION_BYTES,
        [PGBOSS_SCHEMA, HISTORY_TABLES],
      );
      const traffic = await this.traffic();
      const bytes = { history: 0, queue: 0, other: 0 };
      for (const row of sizes.rows) bytes[row.grp] += row.bytes;
      return {
        postgresCpuSeconds: this.pg.postmasterPid
          ? postgresCpuSeconds(this.pg.postmasterPid)
          : null,
        walBytes: wal.rows[0].lsn,
        walPosition: wal.rows[0].position,
        walRecords: wal.rows[0].records,
        walFullPageImages: wal.rows[0].fpi,
        statements: statements ? statements.rows[0].n : null,
        foreignKeyChecks: statements ? statements.rows[0].fk : null,
        transactions: xacts.rows[0]?.n ?? 0,
        roundTrips: traffic?.roundTrips ?? null,
        waits: traffic?.waits ?? null,
        relationBytes: bytes,
      };
    } finally {
      await Promise.all([admin.end(), db.end()]);
    }
  }
}

/**
 * The sums of `dueline_db_round_trips_total` and `dueline_db_waits_total` over the replicas'
 * /metrics (null if one fails).
 */
export function serviceTraffic(urls: () => readonly string[]): TrafficSource {
  return async () => {
    const total: Traffic = { roundTrips: 0, waits: 0 };
    for (const url of urls()) {
      const text = await fetch(`${url}/metrics`).then(
        (res) => (res.ok ? res.text() : null),
        () => null,
      );
      const roundTrips = text && /^dueline_db_round_trips_total (\d+(?:\.\d+)?)/m.exec(text);
      const waits = text && /^dueline_db_waits_total (\d+(?:\.\d+)?)/m.exec(text);
      if (!roundTrips || !waits) return null;
      total.roundTrips += Number(roundTrips[1]);
      total.waits += Number(waits[1]);
    }
    return total;
  };
}

/** Runs delivered in a span: distinct run ids of the receipts that arrived inside it. */
export function runsDeliveredBetween(
  receipts: readonly Receipt[],
  from: number,
  to: number,
): number {
  const runs = new Set<string>();
  for (const r of receipts) if (r.receivedAt >= from && r.receivedAt <= to) runs.add(r.runId);
  return runs.size;
}

/** One line for the progress output. */
export function describeCost(cost: OccurrenceCost): string {
  const p = cost.perRun;
  const v = (x: number | null, unit = '') => (x === null ? 'n/a' : `${x}${unit}`);
  return (
    `cost per run over ${cost.runs} runs (${cost.seconds} s): Postgres CPU ${v(p.postgresCpuMs, ' ms')}, ` +
    `WAL ${v(p.walBytes, ' B')} (${v(p.walRecords)} records, ${v(p.walFullPageImages)} FPI), ` +
    `${v(p.statements)} statements (+${v(p.foreignKeyChecks)} FK checks), ${v(p.transactions)} transactions, ${v(p.roundTrips)} round trips (${v(p.waits)} waits), ` +
    `+${v(p.relationBytes, ' B')} relations (history ${v(p.historyBytes)}, queue ${v(p.queueBytes)}, ` +
    `other ${v(p.otherBytes)}), service CPU ${v(p.serviceCpuMs, ' ms')}`
  );
}
