import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The occurrence ledger, its attempts, and the shard leases pollers hold. "Exactly one logical
 * occurrence" is the unique (schedule_id, revision, scheduled_at) constraint, not any lock.
 */
export class Dispatch1796040000000 implements MigrationInterface {
  name = 'Dispatch1796040000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "occurrences" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "schedule_id" uuid NOT NULL,
        "revision" integer NOT NULL,
        "scheduled_at" TIMESTAMP WITH TIME ZONE NOT NULL,
        "scheduled_local" text NOT NULL,
        "state" text NOT NULL,
        "reason" text,
        "trigger" text NOT NULL DEFAULT 'schedule',
        "attempt_count" integer NOT NULL DEFAULT '0',
        "max_attempts" integer NOT NULL,
        "retry_deadline" TIMESTAMP WITH TIME ZONE NOT NULL,
        "next_attempt_at" TIMESTAMP WITH TIME ZONE,
        "lease_until" TIMESTAMP WITH TIME ZONE,
        "fencing_token" bigint NOT NULL DEFAULT '0',
        "worker_id" text,
        "cancel_requested_at" TIMESTAMP WITH TIME ZONE,
        "coalesced_count" integer NOT NULL DEFAULT '0',
        "coalesced_first" TIMESTAMP WITH TIME ZONE,
        "coalesced_last" TIMESTAMP WITH TIME ZONE,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "occurrences_state_check" CHECK (state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT', 'SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED', 'UNKNOWN')),
        CONSTRAINT "occurrences_identity_key" UNIQUE ("schedule_id", "revision", "scheduled_at"),
        CONSTRAINT "occurrences_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "occurrences_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION,
        CONSTRAINT "occurrences_schedule_id_fkey" FOREIGN KEY ("schedule_id")
          REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    // Partial indexes keep the hot questions cheap however long the history grows: which runs
    // are active for a schedule (overlap), running for a tenant (concurrency), past their lease
    // (sweeper), due for a retry, or queued for too long (repair).
    await queryRunner.query(
      `CREATE INDEX "occurrences_queued_idx" ON "occurrences" ("created_at") WHERE state = 'QUEUED'`,
    );
    await queryRunner.query(
      `CREATE INDEX "occurrences_retry_idx" ON "occurrences" ("next_attempt_at") WHERE state = 'RETRY_WAIT'`,
    );
    await queryRunner.query(
      `CREATE INDEX "occurrences_lease_idx" ON "occurrences" ("lease_until") WHERE state = 'RUNNING'`,
    );
    await queryRunner.query(
      `CREATE INDEX "occurrences_running_by_tenant_idx" ON "occurrences" ("tenant_id") WHERE state = 'RUNNING'`,
    );
    await queryRunner.query(
      `CREATE INDEX "occurrences_active_by_schedule_idx" ON "occurrences" ("schedule_id") WHERE state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`,
    );
    await queryRunner.query(
      `CREATE INDEX "occurrences_history_idx" ON "occurrences" ("schedule_id", "scheduled_at", "id")`,
    );
    await queryRunner.query(`
      CREATE TABLE "attempts" (
        "run_id" uuid NOT NULL,
        "attempt_no" integer NOT NULL,
        "tenant_id" uuid NOT NULL,
        "worker_id" text NOT NULL,
        "fencing_token" bigint NOT NULL,
        "started_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "ended_at" TIMESTAMP WITH TIME ZONE,
        "outcome" text,
        "http_status" integer,
        "duration_ms" integer,
        "error" text,
        "trace_id" text,
        CONSTRAINT "attempts_pkey" PRIMARY KEY ("run_id", "attempt_no"),
        CONSTRAINT "attempts_run_id_fkey" FOREIGN KEY ("run_id")
          REFERENCES "occurrences"("id") ON DELETE CASCADE ON UPDATE NO ACTION
      )`);
    await queryRunner.query(`
      CREATE TABLE "poller_presence" (
        "poller_id" text NOT NULL,
        "seen_until" TIMESTAMP WITH TIME ZONE NOT NULL,
        CONSTRAINT "poller_presence_pkey" PRIMARY KEY ("poller_id")
      )`);
    await queryRunner.query(`
      CREATE TABLE "shard_leases" (
        "shard" smallint NOT NULL,
        "owner" text,
        "epoch" bigint NOT NULL DEFAULT '0',
        "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT '-infinity',
        CONSTRAINT "shard_leases_pkey" PRIMARY KEY ("shard")
      )`);
    // Every shard exists from the start, unowned, so acquiring one is always an UPDATE.
    await queryRunner.query(`INSERT INTO "shard_leases" (shard) SELECT generate_series(0, 127)`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "shard_leases"`);
    await queryRunner.query(`DROP TABLE "poller_presence"`);
    await queryRunner.query(`DROP TABLE "attempts"`);
    await queryRunner.query(`DROP TABLE "occurrences"`);
  }
}
