import type { Client } from 'pg';
import { PGBOSS_SCHEMA } from '../src/queue';
import type { RelationRow } from './soak-analysis';

/**
 * Every table and partition of ours and pg-boss's: sizes (table with TOAST, and its indexes),
 * live/dead tuples and autovacuum counters from pg_stat_user_tables, and its partition root
 * (pg-boss's named `pgboss.<root>`), for the soak's samples.
 */
const RELATIONS = `
  SELECT c.oid::int AS relid, c.relname AS name,
         CASE WHEN n.nspname = 'public' THEN root.relname ELSE n.nspname || '.' || root.relname END AS root,
         c.relispartition AS is_partition,
         pg_table_size(c.oid)::float8 AS table_bytes,
         pg_indexes_size(c.oid)::float8 AS index_bytes,
         coalesce(s.n_live_tup, 0)::float8 AS live,
         coalesce(s.n_dead_tup, 0)::float8 AS dead,
         coalesce(s.autovacuum_count, 0)::float8 AS autovacuums,
         coalesce(s.autoanalyze_count, 0)::float8 AS autoanalyzes,
         (extract(epoch FROM s.last_autovacuum) * 1000)::float8 AS last_autovacuum
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_class root ON root.oid = coalesce(pg_partition_root(c.oid), c.oid)
    LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
   WHERE n.nspname IN ('public', $1) AND c.relkind = 'r'`;

export async function readRelations(client: Client): Promise<RelationRow[]> {
  const { rows } = await client.query<{
    relid: number;
    name: string;
    root: string;
    is_partition: boolean;
    table_bytes: number;
    index_bytes: number;
    live: number;
    dead: number;
    autovacuums: number;
    autoanalyzes: number;
    last_autovacuum: number | null;
  }>(RELATIONS, [PGBOSS_SCHEMA]);
  return rows.map((r) => ({
    relid: r.relid,
    name: r.name,
    root: r.root,
    isPartition: r.is_partition,
    tableBytes: r.table_bytes,
    indexBytes: r.index_bytes,
    liveTuples: r.live,
    deadTuples: r.dead,
    autovacuums: r.autovacuums,
    autoanalyzes: r.autoanalyzes,
    lastAutovacuum: r.last_autovacuum,
  }));
}
