/** The two partitioned history tables and their DEFAULT partitions (migration PartitionedHistory). */
export const HISTORY_TABLES = ['occurrences', 'attempts'] as const;
export type HistoryTable = (typeof HISTORY_TABLES)[number];

export const defaultPartitionOf = (table: HistoryTable): string => `${table}_default`;

/**
 * A range partition's name: its table and its lower bound in UTC to the minute
 * (`occurrences_p20260301_0000`). Bounds are whole minutes, so names never collide. Built here
 * only, from instants, never from input: the DDL may use it as an identifier.
 */
export function partitionName(table: HistoryTable, from: Date): string {
  const iso = from.toISOString();
  return `${table}_p${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}

/** A bound as the literal the DDL uses (ISO 8601 in UTC). */
export const boundLiteral = (at: Date): string => at.toISOString();
