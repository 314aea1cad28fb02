import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Waiting runs with a start deadline, by deadline: the admitter skips the late ones through it
 * instead of reading every tenant's whole waiting list every round.
 */
export class WaitingDeadlineIndex1796093000000 implements MigrationInterface {
  name = 'WaitingDeadlineIndex1796093000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX "occurrences_waiting_deadline_idx" ON "occurrences" ("start_deadline")
        WHERE state = 'QUEUED' AND admitted_at IS NULL AND start_deadline IS NOT NULL`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "occurrences_waiting_deadline_idx"`);
  }
}
