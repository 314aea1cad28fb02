import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * maxActiveSchedules in O(1): a per-tenant count of live (active or paused) schedules that every
 * create, cancel and completion keeps in its own transaction, backfilled here from the schedules.
 * The backfill holds SHARE on schedules, so no create, edit or dispatch commits between the count
 * and the commit of this migration (writers wait for it; readers do not).
 */
export class ScheduleQuota1796070000000 implements MigrationInterface {
  name = 'ScheduleQuota1796070000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "tenant_schedule_counts" (
        "tenant_id" uuid NOT NULL,
        "live" integer NOT NULL DEFAULT 0,
        CONSTRAINT "tenant_schedule_counts_live_check" CHECK (live >= 0),
        CONSTRAINT "tenant_schedule_counts_pkey" PRIMARY KEY ("tenant_id"),
        CONSTRAINT "tenant_schedule_counts_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`LOCK TABLE "schedules" IN SHARE MODE`);
    await queryRunner.query(`
      INSERT INTO tenant_schedule_counts (tenant_id, live)
      SELECT t.id, count(s.id)
        FROM tenants t
        LEFT JOIN schedules s ON s.tenant_id = t.id AND s.status IN ('active', 'paused')
       GROUP BY t.id`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "tenant_schedule_counts"`);
  }
}
