import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Drops `occurrences_running_by_tenant_idx` (a tenant's RUNNING runs). Every claim wrote an entry
 * into it (a RUNNING row version is a new entry in each index whose predicate it meets: nine of
 * them before this, eight after), and no statement needs it: the sweeper's two statements find
 * expired leases through `occurrences_lease_idx` (RUNNING by lease expiry, the order they read
 * in), and a tenant's RUNNING runs are a subset of the runs `occurrences_holding_by_tenant_idx`
 * holds (its permits), which every count of them reads.
 */
export class OneTenantRunIndex1796640000000 implements MigrationInterface {
  name = 'OneTenantRunIndex1796640000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_running_by_tenant_idx"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX "occurrences_running_by_tenant_idx" ON "occurrences" ("tenant_id") WHERE state = 'RUNNING'`,
    );
  }
}
