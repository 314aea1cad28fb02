import { MigrationInterface, QueryRunner } from 'typeorm';

/** Tenants and their API keys (stored as SHA-256 of the secret part, never the key). */
export class Init1796012728174 implements MigrationInterface {
  name = 'Init1796012728174';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "tenants" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "name" text NOT NULL,
        "max_active_schedules" integer NOT NULL,
        "dispatch_rate_per_second" integer NOT NULL,
        "max_concurrent_runs" integer NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "tenants_pkey" PRIMARY KEY ("id")
      )`);
    await queryRunner.query(`
      CREATE TABLE "api_keys" (
        "key_id" text NOT NULL,
        "tenant_id" uuid NOT NULL,
        "secret_sha256" bytea NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "revoked_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "api_keys_pkey" PRIMARY KEY ("key_id"),
        CONSTRAINT "api_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`CREATE INDEX "api_keys_tenant_id_idx" ON "api_keys" ("tenant_id")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "api_keys"`);
    await queryRunner.query(`DROP TABLE "tenants"`);
  }
}
