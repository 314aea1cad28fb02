import type { PoolClient } from 'pg';
import { QueryRunnerAlreadyReleasedError, type EntityManager } from 'typeorm';

/**
 * An open database transaction, as services see it: a handle to pass to the repositories whose
 * statements must commit or roll back together. Only this module can reach the connection
 * behind it, so no code outside a repository can run SQL through it.
 */
export interface Tx {
  readonly __transaction: unique symbol;
}

/** What a transaction's handle stands for: TypeORM's manager and the connection under it. */
interface OpenTransaction {
  manager: EntityManager;
  /**
   * The connection itself: a statement of the transaction is written to it at once, in the order
   * it is called (no await between the call and the write), so statements sent without waiting
   * for each other's answers travel in that order (see SqlRunner.transaction).
   */
  client: PoolClient;
  /** Committed or rolled back: its connection is back in the pool, maybe someone else's. */
  ended: boolean;
  /**
   * Statements written as the transaction's last (see SqlRunner.rowsAtCommit): their answers
   * are awaited with the COMMIT's, which is written right behind them. Once one is written, only
   * another last statement may follow.
   */
  last: Array<Promise<unknown>>;
}

const open = new WeakMap<Tx, OpenTransaction>();

export function wrapTransaction(manager: EntityManager, client: PoolClient): Tx {
  const tx = Object.freeze({}) as Tx;
  open.set(tx, { manager, client, ended: false, last: [] });
  return tx;
}

/** Called once the transaction has committed or rolled back: its handle is dead from then on. */
export function endTransaction(tx: Tx): void {
  openOf(tx).ended = true;
}

function openOf(tx: Tx): OpenTransaction {
  const found = open.get(tx);
  if (!found) throw new Error('not a transaction of this process');
  return found;
}

export function managerOf(tx: Tx): EntityManager {
  return openOf(tx).manager;
}

export function clientOf(tx: Tx): PoolClient {
  const found = openOf(tx);
  if (found.ended) throw new QueryRunnerAlreadyReleasedError();
  if (found.last.length > 0) throw new StatementAfterLastError();
  return found.client;
}

/**
 * The connection, for a statement written as one of the transaction's last: `answer` (its
 * result) is then awaited with the COMMIT's (see lastStatementsOf).
 */
export function clientForLast(tx: Tx, answer: (client: PoolClient) => Promise<unknown>): void {
  const found = openOf(tx);
  if (found.ended) throw new QueryRunnerAlreadyReleasedError();
  const answered = answer(found.client);
  // Awaited by the commit; a transaction whose work throws first rolls back without it.
  answered.catch(() => undefined);
  found.last.push(answered);
}

/** The statements written as the transaction's last, in the order written. */
export function lastStatementsOf(tx: Tx): ReadonlyArray<Promise<unknown>> {
  return openOf(tx).last;
}

/**
 * A statement written after one of the transaction's last: it would follow the COMMIT, so it is
 * refused before it is written (a defect of the caller, never a state of the database).
 */
export class StatementAfterLastError extends Error {
  constructor() {
    super("a statement after the transaction's last: it would run behind the COMMIT");
  }
}
