import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Richer schedules: interval timing (every_seconds from anchor_at), labels (GIN-indexed for
 * containment filters), excluded local dates (the schedule's own, or copied from one of the
 * tenant's unchanging calendars), and max_runs with the run_count the poller keeps beside it.
 */
export class RicherSchedules1796300000000 implements MigrationInterface {
  name = 'RicherSchedules1796300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "calendars" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "name" text NOT NULL,
        "dates" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "calendars_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "calendars_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "calendars_tenant_name_key" ON "calendars" ("tenant_id", "name")`,
    );
    await queryRunner.query(`
      ALTER TABLE "schedules"
        ADD "every_seconds" integer,
        ADD "anchor_at" TIMESTAMP WITH TIME ZONE,
        ADD "labels" jsonb NOT NULL DEFAULT '{}',
        ADD "excluded_dates" jsonb NOT NULL DEFAULT '[]',
        ADD "calendar_id" uuid,
        ADD "max_runs" integer,
        ADD "run_count" integer NOT NULL DEFAULT 0,
        ADD CONSTRAINT "schedules_calendar_id_fkey" FOREIGN KEY ("calendar_id")
          REFERENCES "calendars"("id") ON DELETE RESTRICT ON UPDATE NO ACTION,
        ADD CONSTRAINT "schedules_max_runs_check" CHECK (max_runs IS NULL OR max_runs > 0),
        DROP CONSTRAINT "schedules_timing_check",
        ADD CONSTRAINT "schedules_timing_check" CHECK (
          (kind = 'once' AND run_at IS NOT NULL AND cron IS NULL AND every_seconds IS NULL)
          OR (kind = 'cron' AND cron IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL AND every_seconds IS NULL)
          OR (kind = 'interval' AND every_seconds > 0 AND anchor_at IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL AND cron IS NULL))`);
    await queryRunner.query(
      `CREATE INDEX "schedules_labels_idx" ON "schedules" USING gin ("labels" jsonb_path_ops)`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "schedules_labels_idx"`);
    await queryRunner.query(`DELETE FROM "schedules" WHERE kind = 'interval'`);
    await queryRunner.query(`
      ALTER TABLE "schedules"
        DROP CONSTRAINT "schedules_timing_check",
        ADD CONSTRAINT "schedules_timing_check" CHECK (
          (kind = 'once' AND run_at IS NOT NULL AND cron IS NULL)
          OR (kind = 'cron' AND cron IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL)),
        DROP CONSTRAINT "schedules_max_runs_check",
        DROP CONSTRAINT "schedules_calendar_id_fkey",
        DROP COLUMN "run_count", DROP COLUMN "max_runs", DROP COLUMN "calendar_id",
        DROP COLUMN "excluded_dates", DROP COLUMN "labels", DROP COLUMN "anchor_at",
        DROP COLUMN "every_seconds"`);
    await queryRunner.query(`DROP TABLE "calendars"`);
  }
}
