import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Event subscriptions: a tenant's subscriptions (a target of its own and a non-empty set of
 * known event types), the event outbox (one row per event and subscription, written in the
 * transaction of the change that caused it; due rows by a partial index, finished ones pruned
 * by another), and a schedule's lateAfterSeconds (run.late).
 */
export class EventSubscriptions1796310000000 implements MigrationInterface {
  name = 'EventSubscriptions1796310000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "schedules"
        ADD "late_after_seconds" integer,
        ADD CONSTRAINT "schedules_late_after_seconds_check"
          CHECK (late_after_seconds IS NULL OR late_after_seconds >= 0)`);
    await queryRunner.query(`
      CREATE TABLE "subscriptions" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "target_id" uuid NOT NULL,
        "event_types" text array NOT NULL,
        "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        CONSTRAINT "subscriptions_event_types_check" CHECK (cardinality(event_types) > 0 AND event_types <@ ARRAY['run.failed', 'run.unknown', 'run.succeeded', 'run.late', 'occurrence.skipped', 'schedule.paused', 'target.disabled']::text[]),
        CONSTRAINT "subscriptions_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "subscriptions_tenant_id_fkey" FOREIGN KEY ("tenant_id")
          REFERENCES "tenants"("id") ON DELETE CASCADE ON UPDATE NO ACTION,
        CONSTRAINT "subscriptions_target_id_fkey" FOREIGN KEY ("target_id")
          REFERENCES "targets"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(`
      CREATE INDEX "subscriptions_tenant_idx" ON "subscriptions" ("tenant_id", "created_at", "id")`);
    await queryRunner.query(`
      CREATE TABLE "events" (
        "id" uuid NOT NULL,
        "subscription_id" uuid NOT NULL,
        "tenant_id" uuid NOT NULL,
        "target_id" uuid NOT NULL,
        "type" text NOT NULL,
        "data" jsonb NOT NULL,
        "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "state" text NOT NULL DEFAULT 'pending',
        "attempts" integer NOT NULL DEFAULT 0,
        "next_attempt_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "last_error" text,
        "finished_at" TIMESTAMP WITH TIME ZONE,
        CONSTRAINT "events_state_check" CHECK (state IN ('pending', 'delivered', 'given_up')),
        CONSTRAINT "events_pkey" PRIMARY KEY ("id", "subscription_id"),
        CONSTRAINT "events_subscription_id_fkey" FOREIGN KEY ("subscription_id")
          REFERENCES "subscriptions"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(`
      CREATE INDEX "events_due_idx" ON "events" ("next_attempt_at") WHERE state = 'pending'`);
    await queryRunner.query(`
      CREATE INDEX "events_finished_idx" ON "events" ("finished_at") WHERE state <> 'pending'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "events"`);
    await queryRunner.query(`DROP TABLE "subscriptions"`);
    await queryRunner.query(`
      ALTER TABLE "schedules" DROP CONSTRAINT "schedules_late_after_seconds_check",
        DROP COLUMN "late_after_seconds"`);
  }
}
