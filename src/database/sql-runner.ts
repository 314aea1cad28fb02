import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient, QueryResult as PgResult } from 'pg';
import {
  QueryFailedError,
  QueryResult,
  QueryRunnerAlreadyReleasedError,
  type DataSource,
  type EntityManager,
  type QueryRunner,
} from 'typeorm';
import { preparedName } from './prepared-statements';
import { managerOf, Tx, wrapTransaction } from './transaction';

export type Row = Record<string, unknown>;

/**
 * How repositories run SQL: a statement inside the caller's transaction when one is given, else
 * on a pooled connection of its own. Injected into `*.repository.ts` files only (lint-enforced):
 * nothing else in the service runs SQL.
 */
@Injectable()
export class SqlRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.dataSource.transaction((manager) => work(wrapTransaction(manager)));
  }

  /** The rows a statement returns (RETURNING included). */
  async rows<T = Row>(sql: string, params: unknown[] = [], tx?: Tx): Promise<T[]> {
    return (await this.structured(sql, params, tx)).records as T[];
  }

  /** How many rows a statement changed. */
  async affected(sql: string, params: unknown[] = [], tx?: Tx): Promise<number> {
    const result = await this.structured(sql, params, tx);
    return result.affected ?? result.records.length;
  }

  /** TypeORM's own API, for plain CRUD on a repository's entity. */
  manager(tx?: Tx): EntityManager {
    return tx ? managerOf(tx) : this.dataSource.manager;
  }

  /**
   * TypeORM's structured result, whatever the command (plain `query()` answers UPDATE and
   * DELETE with `[rows, rowCount]` but other commands with the rows alone). Statements that
   * prepare (see prepared-statements.ts) go to the connection as named statements; the others
   * through TypeORM's runner as before. Failures are TypeORM's QueryFailedError either way.
   */
  private async structured(sql: string, params: unknown[], tx?: Tx): Promise<QueryResult> {
    const manager = this.manager(tx);
    const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
    try {
      const name = preparedName(sql);
      if (name === null) return await runner.query(sql, params, true);
      return await prepared(runner, name, sql, params);
    } finally {
      if (!manager.queryRunner) await runner.release();
    }
  }
}

async function prepared(
  runner: QueryRunner,
  name: string,
  sql: string,
  params: unknown[],
): Promise<QueryResult> {
  if (runner.isReleased) throw new QueryRunnerAlreadyReleasedError();
  const client = (await runner.connect()) as PoolClient;
  let raw: PgResult;
  try {
    raw = await client.query({ name, text: sql, values: params });
  } catch (error) {
    throw new QueryFailedError(sql, params, error as Error);
  }
  const result = new QueryResult();
  result.records = raw.rows;
  result.affected = raw.rowCount ?? undefined;
  result.raw =
    raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows;
  return result;
}
