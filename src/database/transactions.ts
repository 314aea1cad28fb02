import { Injectable } from '@nestjs/common';
import { SqlRunner } from './sql-runner';
import type { Tx } from './transaction';

/**
 * Opens a transaction for a service that composes several repositories' statements (an
 * occurrence and its queue job, a claim and its refusal). The work gets a `Tx` to hand on; it
 * commits when the work resolves and rolls back when it throws.
 */
@Injectable()
export class Transactions {
  constructor(private readonly sql: SqlRunner) {}

  run<T>(work: (tx: Tx) => Promise<T>): Promise<T> {
    return this.sql.transaction(work);
  }
}
