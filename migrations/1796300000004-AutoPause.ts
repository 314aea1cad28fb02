import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Auto-pause: a schedule may pause itself after N consecutive FAILED or UNKNOWN runs. It keeps
 * the threshold, the instant the count starts from (creation, and each resume), and while
 * paused why (a machine reason) with a note. Recent failures are found by a partial index.
 */
export class AutoPause1796300000004 implements MigrationInterface {
  name = 'AutoPause1796300000004';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "schedules"
        ADD "pause_after_failures" integer,
        ADD "failures_counted_from" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        ADD "paused_reason" text,
        ADD "paused_note" text,
        ADD CONSTRAINT "schedules_paused_reason_check"
          CHECK (paused_reason IS NULL OR paused_reason IN ('paused_by_request', 'consecutive_failures'))`);
    await queryRunner.query(`
      UPDATE schedules SET paused_reason = 'paused_by_request' WHERE status = 'paused'`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_failed_recent_idx" ON "occurrences" ("finished_at")
        WHERE state IN ('FAILED', 'UNKNOWN')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_failed_recent_idx"`);
    await queryRunner.query(`
      ALTER TABLE "schedules" DROP CONSTRAINT "schedules_paused_reason_check",
        DROP COLUMN "paused_note", DROP COLUMN "paused_reason",
        DROP COLUMN "failures_counted_from", DROP COLUMN "pause_after_failures"`);
  }
}
