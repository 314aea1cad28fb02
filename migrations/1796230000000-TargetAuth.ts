import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Authentication to targets: a sealed auth block per target beside the view reads show, and
 * the keys dueline signs its OIDC-style JWTs with (service-wide: one issuer, one JWKS).
 */
export class TargetAuth1796230000000 implements MigrationInterface {
  name = 'TargetAuth1796230000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "targets"
        ADD COLUMN "auth" text,
        ADD COLUMN "auth_view" jsonb,
        ADD CONSTRAINT "targets_auth_check" CHECK ((auth IS NULL) = (auth_view IS NULL))`);
    await queryRunner.query(`
      CREATE TABLE "signing_keys" (
        "kid" text NOT NULL,
        "algorithm" text NOT NULL,
        "private_key" text NOT NULL,
        "public_jwk" jsonb NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "activates_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "retires_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "signing_keys_pkey" PRIMARY KEY ("kid")
      )`);
    await queryRunner.query(
      `CREATE INDEX "signing_keys_activates_at_idx" ON "signing_keys" ("activates_at")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "signing_keys"`);
    await queryRunner.query(`
      ALTER TABLE "targets"
        DROP CONSTRAINT "targets_auth_check", DROP COLUMN "auth_view", DROP COLUMN "auth"`);
  }
}
