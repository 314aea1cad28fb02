import { Injectable } from '@nestjs/common';
import { SqlRunner } from '../database';

/**
 * The one clock that decides due-ness: the database's (a dispatch reads its transaction's now()
 * with the entries it claims). clock_timestamp() is the wall clock now, for measuring this
 * replica's skew.
 */
@Injectable()
export class DatabaseClockRepository {
  constructor(private readonly sql: SqlRunner) {}

  async now(): Promise<Date> {
    const [{ now }] = await this.sql.rows<{ now: Date }>('SELECT clock_timestamp() AS now');
    return now;
  }
}
