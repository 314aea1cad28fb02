import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run indexes that stay right under a plan made while a partition was empty. The engine's
 * statements are prepared once per connection and Postgres keeps a generic plan for them; one
 * made while the current partition was still empty (a new database, or a new partition, before
 * autovacuum has analysed it) sees every index as equally cheap and keeps the one it found
 * first, until the partition is analysed. Measured in the noisy-tenant benchmark, that plan read
 * a 10,000-run flood on every admitter round and every poller batch: the tenant's permits were
 * counted through `occurrences_tenant_search_idx` (all of the tenant's runs, filtered: 10,496
 * buffers, 37 ms) and the fleet's backlog and the deadline skip through `occurrences_queued_idx`
 * (every QUEUED run, waiting ones included: 7,984 rows read for 2). So:
 * - a tenant's permits (RUNNING and admitted QUEUED runs) get an index of exactly that set, as a
 *   target's have (`occurrences_holding_by_target_idx`), which replaces the admitted-only one;
 * - the QUEUED index by age holds only admitted runs (the outbox repair and its age read only
 *   those): runs waiting in the ledger are never in an index that a query not about waiting
 *   runs can pick.
 * Each index then holds only what its statements count, whatever plan reads it.
 */
export class StatsProofRunIndexes1796630000000 implements MigrationInterface {
  name = 'StatsProofRunIndexes1796630000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_admitted_by_tenant_idx"`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_holding_by_tenant_idx" ON "occurrences" ("tenant_id")
        WHERE state = 'RUNNING' OR (state = 'QUEUED' AND admitted_at IS NOT NULL)`);
    await queryRunner.query(`DROP INDEX "occurrences_queued_idx"`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_queued_idx" ON "occurrences" ("created_at")
        WHERE state = 'QUEUED' AND admitted_at IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_queued_idx"`);
    await queryRunner.query(
      `CREATE INDEX "occurrences_queued_idx" ON "occurrences" ("created_at") WHERE state = 'QUEUED'`,
    );
    await queryRunner.query(`DROP INDEX "occurrences_holding_by_tenant_idx"`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_admitted_by_tenant_idx" ON "occurrences" ("tenant_id")
        WHERE state = 'QUEUED' AND admitted_at IS NOT NULL`);
  }
}
