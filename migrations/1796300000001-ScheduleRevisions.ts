import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Revisions become history: one row per revision of a schedule, with who made it (the API key's
 * public id), when, what changed and the definition it left. Each existing schedule gets the row
 * of its current revision ('recorded': who made it and the earlier revisions are not known).
 */
export class ScheduleRevisions1796300000001 implements MigrationInterface {
  name = 'ScheduleRevisions1796300000001';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "schedule_revisions" (
        "id" uuid NOT NULL DEFAULT gen_random_uuid(),
        "tenant_id" uuid NOT NULL,
        "schedule_id" uuid NOT NULL,
        "revision" integer NOT NULL,
        "change" text NOT NULL,
        "changed_by_key_id" text,
        "changed_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(),
        "changes" jsonb NOT NULL DEFAULT '[]',
        "definition" jsonb NOT NULL,
        "note" text,
        CONSTRAINT "schedule_revisions_pkey" PRIMARY KEY ("id"),
        CONSTRAINT "schedule_revisions_change_check" CHECK (change IN ('created', 'edited', 'paused', 'resumed', 'cancelled', 'auto_paused', 'recorded')),
        CONSTRAINT "schedule_revisions_schedule_id_fkey" FOREIGN KEY ("schedule_id")
          REFERENCES "schedules"("id") ON DELETE CASCADE ON UPDATE NO ACTION)`);
    await queryRunner.query(`
      CREATE UNIQUE INDEX "schedule_revisions_schedule_revision_key"
        ON "schedule_revisions" ("schedule_id", "revision")`);
    await queryRunner.query(`
      INSERT INTO schedule_revisions (tenant_id, schedule_id, revision, change, changed_at, definition)
      SELECT s.tenant_id, s.id, s.revision, 'recorded', s.updated_at,
             jsonb_build_object(
               'name', s.name, 'targetId', s.target_id, 'payload', s.payload,
               'runAt', to_char(s.run_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'cron', s.cron, 'everySeconds', s.every_seconds,
               'anchorAt', to_char(s.anchor_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'timezone', s.timezone,
               'dstPolicy', CASE WHEN s.kind = 'cron' THEN jsonb_build_object(
                 'nonexistent', s.dst_nonexistent, 'repeated', s.dst_repeated) END,
               'startAt', to_char(s.start_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'endAt', to_char(s.end_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
               'missedRunPolicy', s.missed_run_policy, 'maxCatchUp', s.max_catch_up,
               'overlapPolicy', s.overlap_policy,
               'retryPolicy', jsonb_build_object(
                 'maxAttempts', s.retry_max_attempts, 'initialDelayMs', s.retry_initial_delay_ms,
                 'maxDelayMs', s.retry_max_delay_ms, 'retryDeadlineSeconds', s.retry_deadline_seconds),
               'priority', s.priority, 'startDeadlineSeconds', s.start_deadline_seconds,
               'labels', s.labels,
               'excludeDates', CASE WHEN s.calendar_id IS NULL THEN s.excluded_dates ELSE '[]'::jsonb END,
               'calendarId', s.calendar_id, 'maxRuns', s.max_runs, 'status', s.status)
        FROM schedules s`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "schedule_revisions"`);
  }
}
