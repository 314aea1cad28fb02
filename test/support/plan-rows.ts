import type { Client } from 'pg';

/** What one plan node of EXPLAIN (ANALYZE, FORMAT JSON) says, as far as the plan tests read it. */
export interface PlanNode {
  'Node Type'?: string;
  'Join Type'?: string;
  'Subplan Name'?: string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/**
 * Rows that scans of `table` (or of its partitions, `<table>_…`) produced or filtered out, over
 * all their loops, in the whole plan: what a statement read of that table.
 */
export function rowsRead(node: PlanNode, table: string): number {
  const name = node['Relation Name'];
  const own =
    name === table || name?.startsWith(`${table}_`)
      ? ((node['Actual Rows'] ?? 0) +
          (node['Rows Removed by Filter'] ?? 0) +
          (node['Rows Removed by Index Recheck'] ?? 0)) *
        (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + rowsRead(child, table), 0);
}

/** The node and every node below it, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** The plan of `EXECUTE <execute>` (a prepared statement and its arguments), run for real. */
export async function explainExecute(client: Client, execute: string): Promise<PlanNode> {
  const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
    `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${execute}`,
  );
  return rows[0]['QUERY PLAN'][0].Plan;
}
