import type { DataSource, EntityManager } from 'typeorm';

/**
 * Runs SQL and returns its rows whatever the command. TypeORM's Postgres driver answers UPDATE
 * and DELETE with `[rows, rowCount]` but other commands with the rows alone; this hides that.
 */
export async function queryRows<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  const result: unknown = await db.query(sql, params);
  if (
    Array.isArray(result) &&
    result.length === 2 &&
    Array.isArray(result[0]) &&
    typeof result[1] === 'number'
  ) {
    return result[0] as T[];
  }
  return result as T[];
}
