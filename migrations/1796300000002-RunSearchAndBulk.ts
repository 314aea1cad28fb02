import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Tenant-wide run search and bulk replay/cancel. A run's identity gains a fourth part, its
 * origin ('' for the poller's and manual runs, the original's id for a replay, the backfill's
 * for a backfilled run), so a replay or a backfill of an instant never collides with the
 * scheduled run of that instant. Runs carry the Idempotency-Key their attempts send (null: their
 * own id) and the run they replay. Bulk operations keep their fixed selection and progress.
 */
export class RunSearchAndBulk1796300000002 implements MigrationInterface {
  name = 'RunSearchAndBulk1796300000002';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        ADD "origin_key" text NOT NULL DEFAULT '',
        ADD "idempotency_key" uuid,
        ADD "replay_of" uuid`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_identity_key",
        ADD CONSTRAINT "occurrences_identity_key"
          UNIQUE ("schedule_id", "revision", "scheduled_at", "origin_key")`);
    await queryRunner.query(`
      CREATE INDEX "occurrences_tenant_search_idx" ON "occurrences" ("tenant_id", "scheduled_at", "id")`);
    await queryRunner.query(`
      CREATE TABLE "bulk_operations" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "kind" text NOT NULL,
        "status" text NOT NULL DEFAULT 'running',
        "total" integer NOT NULL,
        "processed" integer NOT NULL DEFAULT 0,
        "succeeded" integer NOT NULL DEFAULT 0,
        "skipped" integer NOT NULL DEFAULT 0,
        "requested_by_key_id" text,
        "lease_until" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "bulk_operations_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "bulk_operations_kind_check" CHECK (kind IN ('replay', 'cancel')),
        CONSTRAINT "bulk_operations_status_check" CHECK (status IN ('running', 'completed')),
        CONSTRAINT "bulk_operations_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(`
      CREATE INDEX "bulk_operations_running_idx" ON "bulk_operations" ("lease_until")
        WHERE status = 'running'`);
    await queryRunner.query(`
      CREATE TABLE "bulk_operation_items" (
        "operation_id" uuid NOT NULL,
        "run_id" uuid NOT NULL,
        "position" integer NOT NULL,
        "outcome" text,
        "result_run_id" uuid,
        CONSTRAINT "bulk_operation_items_pkey" PRIMARY KEY ("operation_id", "run_id"),
        CONSTRAINT "bulk_operation_items_outcome_check" CHECK (outcome IS NULL OR outcome IN ('replayed', 'already_replayed', 'not_replayable', 'schedule_cancelled', 'cancelled', 'cancel_requested', 'already_final')),
        CONSTRAINT "bulk_operation_items_operation_id_fkey" FOREIGN KEY ("operation_id")
          REFERENCES "bulk_operations"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX "bulk_operation_items_position_key"
        ON "bulk_operation_items" ("operation_id", "position")`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "bulk_operation_items"`);
    await queryRunner.query(`DROP TABLE "bulk_operations"`);
    await queryRunner.query(`DROP INDEX "occurrences_tenant_search_idx"`);
    await queryRunner.query(`DELETE FROM "occurrences" WHERE origin_key <> ''`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_identity_key",
        ADD CONSTRAINT "occurrences_identity_key" UNIQUE ("schedule_id", "revision", "scheduled_at")`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP COLUMN "replay_of", DROP COLUMN "idempotency_key",
        DROP COLUMN "origin_key"`);
  }
}
