import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The tenants' projected load: per-minute counters (recurring: every minute, minute of the
 * hour, minute of the day; one-time runs by minute) and what each schedule added to them, so a
 * create or edit is checked against the tenant's dispatch rate without scanning its schedules.
 * Schedules that exist before this migration add nothing until they are next edited.
 */
export class LoadProfile1796091000000 implements MigrationInterface {
  name = 'LoadProfile1796091000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "tenant_load_profile" (
        "tenant_id" uuid NOT NULL,
        "period" text NOT NULL,
        "slot" smallint NOT NULL,
        "runs" integer NOT NULL,
        CONSTRAINT "tenant_load_profile_pkey" PRIMARY KEY ("tenant_id", "period", "slot"),
        CONSTRAINT "tenant_load_profile_period_check" CHECK (period IN ('minute', 'hour', 'day')),
        CONSTRAINT "tenant_load_profile_runs_check" CHECK (runs >= 0),
        CONSTRAINT "tenant_load_profile_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`
      CREATE TABLE "tenant_load_instants" (
        "tenant_id" uuid NOT NULL,
        "minute" TIMESTAMP WITH TIME ZONE NOT NULL,
        "runs" integer NOT NULL,
        CONSTRAINT "tenant_load_instants_pkey" PRIMARY KEY ("tenant_id", "minute"),
        CONSTRAINT "tenant_load_instants_runs_check" CHECK (runs >= 0),
        CONSTRAINT "tenant_load_instants_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE
      )`);
    await queryRunner.query(`
      CREATE TABLE "schedule_load" (
        "schedule_id" uuid NOT NULL,
        "tenant_id" uuid NOT NULL,
        "contribution" jsonb NOT NULL,
        CONSTRAINT "schedule_load_pkey" PRIMARY KEY ("schedule_id")
      )`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "schedule_load"`);
    await queryRunner.query(`DROP TABLE "tenant_load_instants"`);
    await queryRunner.query(`DROP TABLE "tenant_load_profile"`);
  }
}
