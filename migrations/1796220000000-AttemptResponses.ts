import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the target answered is kept on each attempt: the allow-listed response headers and the
 * start of the body (the status was already in http_status).
 */
export class AttemptResponses1796220000000 implements MigrationInterface {
  name = 'AttemptResponses1796220000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "attempts"
        ADD COLUMN "response_headers" jsonb,
        ADD COLUMN "response_body" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "attempts" DROP COLUMN "response_body", DROP COLUMN "response_headers"`);
  }
}
