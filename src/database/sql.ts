import type { DataSource, EntityManager, QueryResult } from 'typeorm';

/**
 * Runs SQL and returns TypeORM's structured result, whatever the command. (Plain `query()`
 * answers UPDATE and DELETE with `[rows, rowCount]` but other commands with the rows alone.)
 * Inside a transaction the statement runs on that transaction's connection.
 */
export async function queryStructured(
  db: DataSource | EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<QueryResult> {
  const manager = 'manager' in db ? db.manager : db;
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    return await runner.query(sql, params, true);
  } finally {
    if (!manager.queryRunner) await runner.release();
  }
}

/** The rows a statement returns (RETURNING included). */
export async function queryRows<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<T[]> {
  return (await queryStructured(db, sql, params)).records as T[];
}

/** How many rows a statement changed. */
export async function queryAffected(
  db: DataSource | EntityManager,
  sql: string,
  params: unknown[] = [],
): Promise<number> {
  const result = await queryStructured(db, sql, params);
  return result.affected ?? result.records.length;
}
