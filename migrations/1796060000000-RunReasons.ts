import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run reasons become machine codes from one vocabulary (run-vocabulary/run-reason.ts), free
 * text moves to reason_detail, and a CHECK keeps the column to the vocabulary. Reasons written
 * before this migration are mapped by the state they ended in and the text they carry; the text
 * itself is kept as the detail.
 */
export class RunReasons1796060000000 implements MigrationInterface {
  name = 'RunReasons1796060000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "occurrences" ADD "reason_detail" text`);
    await queryRunner.query(`
      UPDATE occurrences
         SET reason_detail = CASE
               WHEN reason IN ('throttled: tenant maxConcurrentRuns',
                               'throttled: tenant dispatchRatePerSecond',
                               'schedule cancelled', 'cancelled by request') THEN NULL
               ELSE reason END,
             reason = CASE
               WHEN reason = 'throttled: tenant maxConcurrentRuns' THEN 'throttled_concurrency'
               WHEN reason = 'throttled: tenant dispatchRatePerSecond' THEN 'throttled_rate'
               WHEN reason = 'schedule cancelled' THEN 'schedule_cancelled'
               WHEN state = 'CANCELLED' THEN 'cancelled_by_request'
               WHEN reason LIKE '%no attempts left%' THEN 'attempts_exhausted'
               WHEN reason LIKE '%retry deadline%' THEN 'retry_deadline_exceeded'
               WHEN reason LIKE 'lease expired%' THEN 'lease_expired'
               WHEN state = 'FAILED' AND reason LIKE '%no longer exists' THEN 'target_missing'
               WHEN state = 'FAILED' THEN 'target_rejected'
               WHEN state = 'UNKNOWN' THEN 'outcome_unknown'
               WHEN state = 'RETRY_WAIT' THEN 'retryable_failure'
               END
       WHERE reason IS NOT NULL
         AND reason NOT IN (${REASONS})`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" ADD CONSTRAINT "occurrences_reason_check"
        CHECK (reason IS NULL OR reason IN (${REASONS}))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_reason_check"`);
    await queryRunner.query(`
      UPDATE occurrences SET reason = coalesce(reason_detail, reason) WHERE reason_detail IS NOT NULL`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP COLUMN "reason_detail"`);
  }
}

/** The vocabulary as it stands at this migration (a later code comes with its own migration). */
const REASONS = `'overlap', 'missed', 'coalesced', 'waiting_for_previous', 'throttled_concurrency', 'throttled_rate', 'retryable_failure', 'lease_expired', 'target_rejected', 'target_missing', 'attempts_exhausted', 'retry_deadline_exceeded', 'outcome_unknown', 'cancelled_by_request', 'schedule_cancelled', 'not_found', 'finished', 'already_claimed', 'not_due', 'contended', 'stale_fencing_token'`;
