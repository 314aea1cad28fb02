import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Attempts keep their run's id and instant without a foreign key to `occurrences`. The key was a
 * check on every claim: the attempt its claim appends made Postgres probe the run it had just
 * updated and lock it FOR KEY SHARE (a second write of the same heap page, and a WAL record per
 * run). What it guarded holds by construction: an attempt is inserted only by the claim that
 * takes its run, in the same statement (CLAIM_RUNS), and a run and its attempts leave together
 * (their partitions are dropped together; a row moved out of the DEFAULT partition moves with
 * its attempts, attempts first). Nothing deletes a single run.
 */
export class AttemptsWithoutRunKey1796700000000 implements MigrationInterface {
  name = 'AttemptsWithoutRunKey1796700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "attempts" DROP CONSTRAINT "attempts_run_id_fkey"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "attempts"
        ADD CONSTRAINT "attempts_run_id_fkey" FOREIGN KEY ("run_id", "scheduled_at")
          REFERENCES "occurrences"("id", "scheduled_at") ON DELETE CASCADE`);
  }
}
