import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Traces: a run keeps the W3C traceparent of the span that created it (the root of its trace),
 * and a schedule the one of the request that created it (its runs' dispatch spans link to it).
 */
export class RunTraces1796240000000 implements MigrationInterface {
  name = 'RunTraces1796240000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "occurrences" ADD COLUMN "trace_parent" text`);
    await queryRunner.query(`ALTER TABLE "schedules" ADD COLUMN "trace_parent" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "schedules" DROP COLUMN "trace_parent"`);
    await queryRunner.query(`ALTER TABLE "occurrences" DROP COLUMN "trace_parent"`);
  }
}
