import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The due entries in instant order across shards: the poller's backlog batch (CLAIM_DUE_ENTRIES)
 * takes the oldest entries of all the shards it holds, and the primary key (shard, due_at, ...)
 * gives that order within one shard only, so every batch read and sorted every entry due by
 * its horizon: a 20,000-run flood of one instant cost each of its 200 batches 12 ms of Postgres
 * CPU, all spent before anyone else's entry could be claimed. Read in this order, a batch reads
 * the entries it takes (and, beside another poller's backlog, that backlog's index entries,
 * never their rows).
 */
export class DueIndexByInstant1796650000000 implements MigrationInterface {
  name = 'DueIndexByInstant1796650000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "due_index_by_instant_idx" ON "due_index" ("due_at", "shard")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "due_index_by_instant_idx"`);
  }
}
