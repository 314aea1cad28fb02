import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Admission ahead of the queue: a run is admitted (its tenant's permit and rate token taken)
 * before its queue job exists, and a run its tenant cannot afford yet waits in the ledger
 * (QUEUED, reason throttled_*) with no job at all, until the admitter takes it. Schedules gain a
 * priority (its runs carry its rank, the waiting list's order) and a start deadline (a run that
 * cannot start in time is SKIPPED deadline_exceeded).
 */
export class Admission1796080000000 implements MigrationInterface {
  name = 'Admission1796080000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "schedules"
        ADD "priority" text NOT NULL DEFAULT 'normal',
        ADD "start_deadline_seconds" integer,
        ADD CONSTRAINT "schedules_priority_check" CHECK (priority IN ('high', 'normal', 'low'))`);
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        ADD "admitted_at" TIMESTAMP WITH TIME ZONE,
        ADD "priority" smallint NOT NULL DEFAULT 1,
        ADD "start_deadline" TIMESTAMP WITH TIME ZONE,
        ADD CONSTRAINT "occurrences_priority_check" CHECK (priority BETWEEN 0 AND 2)`);
    // Runs already waiting for a job, or holding one, count as admitted: nothing changes for them.
    await queryRunner.query(`
      UPDATE occurrences SET admitted_at = created_at
       WHERE state = 'QUEUED' AND reason IS NULL`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${REASONS}))`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_waiting_admission_idx"
        ON "occurrences" ("tenant_id", "priority", "scheduled_at", "id")
        WHERE state = 'QUEUED' AND admitted_at IS NULL
          AND reason IN ('throttled_concurrency', 'throttled_rate')`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_admitted_by_tenant_idx" ON "occurrences" ("tenant_id")
        WHERE state = 'QUEUED' AND admitted_at IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_admitted_by_tenant_idx"`);
    await queryRunner.query(`DROP INDEX "occurrences_waiting_admission_idx"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_priority_check",
        DROP COLUMN "start_deadline", DROP COLUMN "priority", DROP COLUMN "admitted_at"`);
    await queryRunner.query(`
      ALTER TABLE "schedules" DROP CONSTRAINT "schedules_priority_check",
        DROP COLUMN "start_deadline_seconds", DROP COLUMN "priority"`);
  }
}

/** The reason vocabulary as it stands at this migration (adds deadline_exceeded). */
const REASONS = `'overlap', 'missed', 'coalesced', 'deadline_exceeded', 'waiting_for_previous', 'throttled_concurrency', 'throttled_rate', 'retryable_failure', 'lease_expired', 'target_rejected', 'target_missing', 'attempts_exhausted', 'retry_deadline_exceeded', 'outcome_unknown', 'cancelled_by_request', 'schedule_cancelled', 'not_found', 'finished', 'already_claimed', 'not_due', 'contended', 'stale_fencing_token'`;
