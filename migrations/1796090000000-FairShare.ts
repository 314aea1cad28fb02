import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fair share of the fleet: a tenant's `weight` quota (default 1) is its share of the worker
 * slots while the fleet is saturated, and a run waiting for a slot is QUEUED `throttled_fleet`
 * (no job, like the other admission waits). The waiting list's index takes the new reason, so
 * the admitter still reads each tenant's waiting runs in admission order from one index.
 */
export class FairShare1796090000000 implements MigrationInterface {
  name = 'FairShare1796090000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "tenants"
        ADD "weight" integer NOT NULL DEFAULT 1,
        ADD CONSTRAINT "tenants_weight_check" CHECK (weight BETWEEN 1 AND 1000)`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${REASONS}))`);
    await queryRunner.query(`DROP INDEX "occurrences_waiting_admission_idx"`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_waiting_admission_idx"
        ON "occurrences" ("tenant_id", "priority", "scheduled_at", "id")
        WHERE state = 'QUEUED' AND admitted_at IS NULL
          AND reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE occurrences SET reason = 'throttled_concurrency' WHERE reason = 'throttled_fleet'`);
    await queryRunner.query(`DROP INDEX "occurrences_waiting_admission_idx"`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_waiting_admission_idx"
        ON "occurrences" ("tenant_id", "priority", "scheduled_at", "id")
        WHERE state = 'QUEUED' AND admitted_at IS NULL
          AND reason IN ('throttled_concurrency', 'throttled_rate')`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${REASONS.replace(", 'throttled_fleet'", '')}))`);
    await queryRunner.query(`
      ALTER TABLE "tenants" DROP CONSTRAINT "tenants_weight_check", DROP COLUMN "weight"`);
  }
}

/** The reason vocabulary as it stands at this migration (adds throttled_fleet). */
const REASONS = `'overlap', 'missed', 'coalesced', 'deadline_exceeded', 'waiting_for_previous', 'throttled_concurrency', 'throttled_rate', 'throttled_fleet', 'retryable_failure', 'lease_expired', 'target_rejected', 'target_missing', 'attempts_exhausted', 'retry_deadline_exceeded', 'outcome_unknown', 'cancelled_by_request', 'schedule_cancelled', 'not_found', 'finished', 'already_claimed', 'not_due', 'contended', 'stale_fencing_token'`;
