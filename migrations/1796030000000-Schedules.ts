import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Schedules, their Idempotency-Keys and the due-time index. The schedule row and its due-index
 * entry are always written in one transaction by the schedules module.
 */
export class Schedules1796030000000 implements MigrationInterface {
  name = 'Schedules1796030000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "schedules" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "name" text NOT NULL,
        "target_id" uuid NOT NULL,
        "revision" integer NOT NULL DEFAULT 1,
        "status" text NOT NULL,
        "kind" text NOT NULL,
        "run_at" TIMESTAMP WITH TIME ZONE,
        "cron" text,
        "timezone" text,
        "dst_nonexistent" text NOT NULL DEFAULT 'skip',
        "dst_repeated" text NOT NULL DEFAULT 'first',
        "start_at" TIMESTAMP WITH TIME ZONE,
        "end_at" TIMESTAMP WITH TIME ZONE,
        "payload" jsonb NOT NULL DEFAULT '{}',
        "missed_run_policy" text NOT NULL,
        "max_catch_up" integer NOT NULL,
        "overlap_policy" text NOT NULL,
        "retry_max_attempts" integer NOT NULL,
        "retry_initial_delay_ms" integer NOT NULL,
        "retry_max_delay_ms" integer NOT NULL,
        "retry_deadline_seconds" integer NOT NULL,
        "next_due_at" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "schedules_status_check" CHECK (status IN ('active', 'paused', 'cancelled', 'completed')),
        CONSTRAINT "schedules_timing_check" CHECK ((kind = 'once' AND run_at IS NOT NULL AND cron IS NULL)
  OR (kind = 'cron' AND cron IS NOT NULL AND timezone IS NOT NULL AND run_at IS NULL)),
        CONSTRAINT "schedules_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "schedules_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(
      `CREATE INDEX "schedules_tenant_listing_idx" ON "schedules" ("tenant_id", "created_at", "id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "idempotency_keys" (
        "tenant_id" uuid NOT NULL,
        "key" text NOT NULL,
        "request_sha256" bytea NOT NULL,
        "schedule_id" uuid NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "idempotency_keys_pkey" PRIMARY KEY ("tenant_id", "key"),
        CONSTRAINT "idempotency_keys_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(
      `CREATE INDEX "idempotency_keys_created_at_idx" ON "idempotency_keys" ("created_at")`,
    );
    // The primary key's leading (shard, due_at) is the poller's bounded range scan.
    await queryRunner.query(`
      CREATE TABLE "due_index" (
        "shard" smallint NOT NULL,
        "due_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "schedule_id" uuid NOT NULL,
        "tenant_id" uuid NOT NULL,
        "revision" integer NOT NULL,
        CONSTRAINT "due_index_pkey" PRIMARY KEY ("shard", "due_at", "schedule_id")
      )`);
    await queryRunner.query(
      `CREATE INDEX "due_index_schedule_id_idx" ON "due_index" ("schedule_id")`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "due_index"`);
    await queryRunner.query(`DROP TABLE "idempotency_keys"`);
    await queryRunner.query(`DROP TABLE "schedules"`);
  }
}
