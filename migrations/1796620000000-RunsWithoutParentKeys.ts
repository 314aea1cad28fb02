import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Runs keep their tenant and schedule ids without foreign keys to `tenants` and `schedules`.
 * On a partitioned table those keys are per-partition triggers: detaching an expired partition
 * turns them into triggers on `tenants` and `schedules` (SHARE ROW EXCLUSIVE on both) and its
 * drop removes them (ACCESS EXCLUSIVE on both), so every drop waited for schedule writers while
 * it held the history's parents, stalling claims and inserts behind it, and a transaction reading
 * schedules for minutes held drops off entirely. The keys also cost two lookups per inserted run.
 * What they guarded holds by construction: a run is written only for a schedule locked in the
 * same transaction (the poller's batch, a trigger, a backfill, a replay of an existing run), and
 * neither tenants nor schedules with runs are ever deleted (a schedule is cancelled; the only
 * schedule delete takes back rows created in the same transaction, before any run). Attempts keep
 * their key to their run: both are history and leave together.
 */
export class RunsWithoutParentKeys1796620000000 implements MigrationInterface {
  name = 'RunsWithoutParentKeys1796620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        DROP CONSTRAINT "occurrences_tenant_id_fkey",
        DROP CONSTRAINT "occurrences_schedule_id_fkey"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        ADD CONSTRAINT "occurrences_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE,
        ADD CONSTRAINT "occurrences_schedule_id_fkey" FOREIGN KEY ("schedule_id")
          REFERENCES "schedules"("id") ON DELETE CASCADE`);
  }
}
