import { MigrationInterface, QueryRunner } from 'typeorm';

/** A permit holder: a RUNNING run, or an admitted QUEUED run (its job on its way to a worker). */
const HOLDING = `state = 'RUNNING' OR (state = 'QUEUED' AND admitted_at IS NOT NULL)`;

/**
 * One index of the runs that hold permits, keyed (tenant_id, target_id), instead of one by
 * tenant and one by target. A run is in that set twice in its life (created admitted, then
 * RUNNING), and each of those row versions was an entry in both indexes: two index entries a
 * run (and their WAL records) go. A tenant's permits are counted on the key's first column as
 * before; a target's with its tenant beside it (a target's runs are all its tenant's), a range of
 * exactly its runs as before.
 */
export class OneHoldingIndex1796680000000 implements MigrationInterface {
  name = 'OneHoldingIndex1796680000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX "occurrences_holding_idx" ON "occurrences" ("tenant_id", "target_id")
        WHERE ${HOLDING}`);
    await queryRunner.query(`DROP INDEX "occurrences_holding_by_tenant_idx"`);
    await queryRunner.query(`DROP INDEX "occurrences_holding_by_target_idx"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX "occurrences_holding_by_target_idx" ON "occurrences" ("target_id")
        WHERE ${HOLDING}`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_holding_by_tenant_idx" ON "occurrences" ("tenant_id")
        WHERE ${HOLDING}`);
    await queryRunner.query(`DROP INDEX "occurrences_holding_idx"`);
  }
}
