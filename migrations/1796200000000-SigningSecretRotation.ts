import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Signing secret rotation: a target keeps the secret a rotation replaced beside the new one for
 * the overlap the caller chose (both sign every call), and the relay drops it afterwards.
 */
export class SigningSecretRotation1796200000000 implements MigrationInterface {
  name = 'SigningSecretRotation1796200000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "targets"
        ADD COLUMN "previous_signing_secret" text,
        ADD COLUMN "previous_signing_secret_expires_at" TIMESTAMP WITH TIME ZONE,
        ADD CONSTRAINT "targets_previous_secret_check"
          CHECK ((previous_signing_secret IS NULL) = (previous_signing_secret_expires_at IS NULL))`);
    await queryRunner.query(`
      CREATE INDEX "targets_previous_secret_expiry_idx"
        ON "targets" ("previous_signing_secret_expires_at")
        WHERE (previous_signing_secret_expires_at IS NOT NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "targets_previous_secret_expiry_idx"`);
    await queryRunner.query(`
      ALTER TABLE "targets"
        DROP CONSTRAINT "targets_previous_secret_check",
        DROP COLUMN "previous_signing_secret_expires_at",
        DROP COLUMN "previous_signing_secret"`);
  }
}
