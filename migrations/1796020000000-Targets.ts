import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Registered targets. Deletion is soft (runs and attempts keep pointing at the row), so names
 * are unique only among live targets, and the listing index covers only live ones.
 * signing_secret is plain text until encryption at rest gets a key-management decision.
 */
export class Targets1796020000000 implements MigrationInterface {
  name = 'Targets1796020000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "targets" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "name" text NOT NULL,
        "kind" text NOT NULL DEFAULT 'http',
        "url" text NOT NULL,
        "method" text NOT NULL DEFAULT 'POST',
        "headers" jsonb NOT NULL DEFAULT '{}',
        "timeout_ms" integer NOT NULL DEFAULT '10000',
        "deduplicates" boolean NOT NULL DEFAULT false,
        "signing_secret" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "deleted_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "targets_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "targets_tenant_id_id_key" UNIQUE ("tenant_id", "id"),
        CONSTRAINT "targets_kind_check" CHECK (kind IN ('http')),
        CONSTRAINT "targets_method_check"
          CHECK (method IN ('GET', 'POST', 'PUT', 'PATCH', 'DELETE')),
        CONSTRAINT "targets_timeout_ms_check" CHECK (timeout_ms BETWEEN 1000 AND 60000),
        CONSTRAINT "targets_headers_check" CHECK (jsonb_typeof(headers) = 'object'),
        CONSTRAINT "targets_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX "targets_tenant_id_name_key" ON "targets" ("tenant_id", "name")
        WHERE (deleted_at IS NULL)`);
    await queryRunner.query(`
      CREATE INDEX "targets_tenant_listing_idx" ON "targets" ("tenant_id", "created_at", "id")
        WHERE (deleted_at IS NULL)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "targets"`);
  }
}
