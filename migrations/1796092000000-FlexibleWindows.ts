import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Caller-agreed flexible windows: a schedule's `flexible_window_seconds` (0: exact), and each
 * run's `fires_at`, its planned fire instant within the window (the nominal scheduled_at stays
 * its identity). Existing runs fire at their nominal instant, as they always did.
 */
export class FlexibleWindows1796092000000 implements MigrationInterface {
  name = 'FlexibleWindows1796092000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "schedules" ADD "flexible_window_seconds" integer NOT NULL DEFAULT 0`);
    await queryRunner.query(`ALTER TABLE "occurrences" ADD "fires_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`UPDATE "occurrences" SET "fires_at" = "scheduled_at"`);
    await queryRunner.query(`ALTER TABLE "occurrences" ALTER COLUMN "fires_at" SET NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "occurrences" DROP COLUMN "fires_at"`);
    await queryRunner.query(`ALTER TABLE "schedules" DROP COLUMN "flexible_window_seconds"`);
  }
}
