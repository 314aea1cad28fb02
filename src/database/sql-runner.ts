import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { PoolClient, QueryResult as PgResult } from 'pg';
import {
  QueryFailedError,
  QueryResult,
  type DataSource,
  type EntityManager,
  type QueryRunner,
} from 'typeorm';
import { preparedName } from './prepared-statements';
import {
  clientForLast,
  clientOf,
  endTransaction,
  lastStatementsOf,
  managerOf,
  Tx,
  wrapTransaction,
} from './transaction';

export type Row = Record<string, unknown>;

/**
 * How repositories run SQL: a statement inside the caller's transaction when one is given, else
 * on a pooled connection of its own. Injected into `*.repository.ts` files only (lint-enforced):
 * nothing else in the service runs SQL.
 */
@Injectable()
export class SqlRunner {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in one transaction: committed when it resolves, rolled back when it throws. BEGIN
   * is written without waiting for its answer, so it travels with the work's first statement
   * (the pool's connections pipeline: `pipeline` in data-source-options.ts) and a transaction
   * waits for the server once less. BEGIN fails only with its connection, and then so does every
   * statement written after it: nothing of the work can run outside the transaction.
   */
  async transaction<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    // TypeORM declares the flag read-only for its callers; its own startTransaction sets it.
    const runner = this.dataSource.createQueryRunner() as QueryRunner & {
      isTransactionActive: boolean;
    };
    let client: PoolClient;
    try {
      client = (await runner.connect()) as PoolClient;
    } catch (error) {
      await runner.release();
      throw error;
    }
    // TypeORM's own operations through this manager (entity CRUD) then never open a
    // transaction of their own inside ours.
    runner.isTransactionActive = true;
    const tx = wrapTransaction(runner.manager, client);
    const begun = send(client, 'BEGIN');
    begun.catch(() => undefined); // answered below, or with the work's first statement
    let ended = false;
    try {
      const result = await work(tx);
      const last = lastStatementsOf(tx);
      if (last.length === 0) {
        await begun;
        await send(client, 'COMMIT');
        return result;
      }
      // The COMMIT travels right behind the last statements, written before any answer is read
      // (BEGIN's included): one wait for all of them. If one of them failed, the server answers
      // the COMMIT with ROLLBACK, and the failure is thrown.
      const committed = client.query('COMMIT').then(
        (raw: PgResult) => raw.command,
        (error: Error) => {
          throw new QueryFailedError('COMMIT', [], error);
        },
      );
      committed.catch(() => undefined); // awaited below, after BEGIN's answer
      await begun;
      const answers = await Promise.allSettled(last);
      const outcome = await committed;
      ended = true;
      const failed = answers.find((answer) => answer.status === 'rejected');
      if (failed) throw failed.reason;
      if (outcome !== 'COMMIT') throw new Error(`the transaction ended with ${outcome}`);
      return result;
    } catch (error) {
      if (!ended) await send(client, 'ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      endTransaction(tx);
      runner.isTransactionActive = false;
      await runner.release();
    }
  }

  /** The rows a statement returns (RETURNING included). */
  async rows<T = Row>(sql: string, params: unknown[] = [], tx?: Tx): Promise<T[]> {
    return (await this.structured(sql, params, tx)).records as T[];
  }

  /**
   * The rows of a statement written as one of transaction `tx`'s last: nothing else of the
   * transaction may be written after it (refused: StatementAfterLastError), and the COMMIT goes
   * right behind it instead of waiting for its answer, so the two cost one wait. Its answer is
   * awaited with the COMMIT's; if it fails, the transaction rolls back and its failure is
   * thrown by the transaction. For the statements a transaction only needs done, never read.
   */
  rowsAtCommit<T = Row>(sql: string, params: unknown[], tx: Tx): Promise<T[]> {
    let rows!: Promise<T[]>;
    clientForLast(tx, (client) => {
      rows = send(client, sql, params).then((result) => result.records as T[]);
      return rows;
    });
    return rows;
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
   * DELETE with `[rows, rowCount]` but other commands with the rows alone). A transaction's
   * statement is written to its connection before this returns (see clientOf); a statement of
   * its own takes a pooled connection. Statements that prepare (see prepared-statements.ts) go
   * as named statements, the others unnamed. Failures are TypeORM's QueryFailedError either way.
   */
  private structured(sql: string, params: unknown[], tx?: Tx): Promise<QueryResult> {
    if (tx) return send(clientOf(tx), sql, params);
    return this.alone(sql, params);
  }

  private async alone(sql: string, params: unknown[]): Promise<QueryResult> {
    const runner = this.dataSource.createQueryRunner();
    try {
      const name = preparedName(sql);
      if (name === null) return await runner.query(sql, params, true);
      return await send((await runner.connect()) as PoolClient, sql, params, name);
    } finally {
      await runner.release();
    }
  }
}

/**
 * Writes one statement to the connection now (named when it prepares) and answers TypeORM's
 * structured result; a failure is TypeORM's QueryFailedError, as a statement run by TypeORM.
 */
function send(
  client: PoolClient,
  sql: string,
  params: unknown[] = [],
  name: string | null = preparedName(sql),
): Promise<QueryResult> {
  const sent: Promise<PgResult> =
    name === null ? client.query(sql, params) : client.query({ name, text: sql, values: params });
  return sent.then(structuredResult, (error: Error) => {
    throw new QueryFailedError(sql, params, error);
  });
}

function structuredResult(raw: PgResult): QueryResult {
  const result = new QueryResult();
  result.records = raw.rows;
  result.affected = raw.rowCount ?? undefined;
  result.raw =
    raw.command === 'UPDATE' || raw.command === 'DELETE' ? [raw.rows, raw.rowCount] : raw.rows;
  return result;
}
