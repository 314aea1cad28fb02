import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Backfills: a request over a schedule's past instants, the plan it took (the instants it is to
 * run, in order, each with its outcome and run), its progress and its Idempotency-Key.
 */
export class Backfills1796300000003 implements MigrationInterface {
  name = 'Backfills1796300000003';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "backfills" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "schedule_id" uuid NOT NULL,
        "idempotency_key" text NOT NULL,
        "request_sha256" bytea NOT NULL,
        "from_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "to_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "reprocess" text NOT NULL,
        "overlap_policy" text NOT NULL,
        "max_concurrent" integer NOT NULL,
        "run_order" text NOT NULL,
        "status" text NOT NULL DEFAULT 'running',
        "plan" jsonb NOT NULL,
        "total" integer NOT NULL,
        "processed" integer NOT NULL DEFAULT 0,
        "created" integer NOT NULL DEFAULT 0,
        "skipped" integer NOT NULL DEFAULT 0,
        "requested_by_key_id" text,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "backfills_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "backfills_status_check" CHECK (status IN ('running', 'completed', 'cancelled')),
        CONSTRAINT "backfills_reprocess_check" CHECK (reprocess IN ('missing', 'failed', 'all')),
        CONSTRAINT "backfills_order_check" CHECK (run_order IN ('oldest', 'newest')),
        CONSTRAINT "backfills_schedule_id_fkey" FOREIGN KEY ("schedule_id")
          REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(
      `CREATE UNIQUE INDEX "backfills_tenant_key" ON "backfills" ("tenant_id", "idempotency_key")`,
    );
    await queryRunner.query(
      `CREATE INDEX "backfills_running_idx" ON "backfills" ("created_at") WHERE status = 'running'`,
    );
    await queryRunner.query(`
      CREATE TABLE "backfill_instants" (
        "backfill_id" uuid NOT NULL,
        "position" integer NOT NULL,
        "scheduled_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "scheduled_local" text NOT NULL,
        "outcome" text,
        "run_id" uuid,
        CONSTRAINT "backfill_instants_pkey" PRIMARY KEY ("backfill_id", "position"),
        CONSTRAINT "backfill_instants_outcome_check" CHECK (outcome IS NULL OR outcome IN ('created', 'skip_existing', 'skip_active', 'skipped_overlap', 'cancelled')),
        CONSTRAINT "backfill_instants_backfill_id_fkey" FOREIGN KEY ("backfill_id")
          REFERENCES "backfills"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "backfill_instants"`);
    await queryRunner.query(`DROP TABLE "backfills"`);
  }
}
