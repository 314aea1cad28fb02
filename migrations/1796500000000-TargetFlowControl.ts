import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Per-target flow control. A target may cap its concurrent runs (`max_concurrency`) and its
 * dispatch rate (`rate_per_second`, a token bucket per target in `target_dispatch_budget`), has
 * a `backoff_until` that a 429/503 with Retry-After sets for all its runs, and a `status`
 * (`disabled` after a 410 Gone, with the reason). A run records the target it was created for
 * (`target_id`, from its schedule), so a target's permits (its RUNNING and admitted QUEUED
 * runs) are an index range. Runs waiting for their target (`throttled_target`,
 * `target_backoff`) form a waiting list of their own, per (tenant, target) in admission order,
 * apart from the tenant's list, so the tenant's admitter never reads past them.
 * Reason codes added: throttled_target, target_backoff, target_gone.
 */
export class TargetFlowControl1796500000000 implements MigrationInterface {
  name = 'TargetFlowControl1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "targets"
        ADD "max_concurrency" integer,
        ADD "rate_per_second" integer,
        ADD "backoff_until" timestamptz,
        ADD "status" text NOT NULL DEFAULT 'active',
        ADD "disabled_reason" text,
        ADD CONSTRAINT "targets_max_concurrency_check" CHECK (max_concurrency BETWEEN 1 AND 100000),
        ADD CONSTRAINT "targets_rate_per_second_check" CHECK (rate_per_second BETWEEN 1 AND 100000),
        ADD CONSTRAINT "targets_status_check" CHECK (status IN ('active', 'disabled')),
        ADD CONSTRAINT "targets_disabled_reason_check"
          CHECK ((status = 'disabled') = (disabled_reason IS NOT NULL))`);
    await queryRunner.query(`
      CREATE TABLE "target_dispatch_budget" (
        "target_id" uuid NOT NULL,
        "tokens" double precision NOT NULL,
        "refilled_at" timestamptz NOT NULL,
        CONSTRAINT "target_dispatch_budget_pkey" PRIMARY KEY ("target_id"),
        CONSTRAINT "target_dispatch_budget_target_id_fkey" FOREIGN KEY ("target_id")
          REFERENCES "targets"("id") ON DELETE CASCADE)`);
    await queryRunner.query(`ALTER TABLE "occurrences" ADD "target_id" uuid`);
    // Runs that may still start or hold a permit learn their target; ended ones keep none.
    await queryRunner.query(`
      UPDATE occurrences o SET target_id = s.target_id
        FROM schedules s
       WHERE s.id = o.schedule_id AND o.state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_holding_by_target_idx" ON "occurrences" ("target_id")
        WHERE state = 'RUNNING' OR (state = 'QUEUED' AND admitted_at IS NOT NULL)`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_waiting_target_idx"
        ON "occurrences" ("tenant_id", "target_id", "priority", "scheduled_at", "id")
        WHERE state = 'QUEUED' AND admitted_at IS NULL
          AND reason IN ('throttled_target', 'target_backoff')`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${REASONS}))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      UPDATE occurrences SET reason = 'throttled_concurrency', admitted_at = NULL
       WHERE reason IN ('throttled_target', 'target_backoff')`);
    await queryRunner.query(`
      UPDATE occurrences SET reason = 'target_rejected' WHERE reason = 'target_gone'`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${PREVIOUS_REASONS}))`);
    await queryRunner.query(`DROP INDEX "occurrences_waiting_target_idx"`);
    await queryRunner.query(`DROP INDEX "occurrences_holding_by_target_idx"`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP COLUMN "target_id"`);
    await queryRunner.query(`DROP TABLE "target_dispatch_budget"`);
    await queryRunner.query(`
      ALTER TABLE "targets"
        DROP CONSTRAINT "targets_disabled_reason_check",
        DROP CONSTRAINT "targets_status_check",
        DROP CONSTRAINT "targets_rate_per_second_check",
        DROP CONSTRAINT "targets_max_concurrency_check",
        DROP COLUMN "disabled_reason", DROP COLUMN "status", DROP COLUMN "backoff_until",
        DROP COLUMN "rate_per_second", DROP COLUMN "max_concurrency"`);
  }
}

const PREVIOUS_REASONS = `'overlap', 'missed', 'coalesced', 'deadline_exceeded', 'waiting_for_previous', 'throttled_concurrency', 'throttled_rate', 'throttled_fleet', 'retryable_failure', 'lease_expired', 'target_rejected', 'target_missing', 'attempts_exhausted', 'retry_deadline_exceeded', 'outcome_unknown', 'cancelled_by_request', 'schedule_cancelled', 'not_found', 'finished', 'already_claimed', 'not_due', 'contended', 'stale_fencing_token'`;

/** The reason vocabulary as it stands at this migration (adds the three target codes). */
const REASONS = `'overlap', 'missed', 'coalesced', 'deadline_exceeded', 'waiting_for_previous', 'throttled_concurrency', 'throttled_rate', 'throttled_fleet', 'throttled_target', 'target_backoff', 'retryable_failure', 'lease_expired', 'target_rejected', 'target_missing', 'target_gone', 'attempts_exhausted', 'retry_deadline_exceeded', 'outcome_unknown', 'cancelled_by_request', 'schedule_cancelled', 'not_found', 'finished', 'already_claimed', 'not_due', 'contended', 'stale_fencing_token'`;
