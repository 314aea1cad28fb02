import { Injectable } from '@nestjs/common';
import { SqlRunner, type Tx } from '../database';

/**
 * The one clock that decides due-ness: the database's. `now()` inside a dispatch transaction is
 * its start (what the batch is planned against); clock_timestamp() is the wall clock now, for
 * measuring this replica's skew.
 */
@Injectable()
export class DatabaseClockRepository {
  constructor(private readonly sql: SqlRunner) {}

  async transactionNow(tx: Tx): Promise<Date> {
    const [{ now }] = await this.sql.rows<{ now: Date }>('SELECT now() AS now', [], tx);
    return now;
  }

  async now(): Promise<Date> {
    const [{ now }] = await this.sql.rows<{ now: Date }>('SELECT clock_timestamp() AS now');
    return now;
  }
}
