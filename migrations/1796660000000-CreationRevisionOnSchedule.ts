import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A schedule's revision 1 stays on its own row until its first edit: the create records who
 * made it (`created_by_key_id`, beside `created_at`), and the first edit, holding the row, writes
 * revision 1 into `schedule_revisions` from the row as it still is before writing its own. Until
 * then the row is revision 1 exactly (nothing changes a schedule's definition or status without
 * a revision but completion, which revision 1's `active` does not record), so reads give it from
 * the row. A create used to write that row too: half of a batch create's statement time in
 * Postgres went to the revision's copy of the definition. Schedules created before keep the
 * revision 1 they have (the first edit leaves it as it is).
 */
export class CreationRevisionOnSchedule1796660000000 implements MigrationInterface {
  name = 'CreationRevisionOnSchedule1796660000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "schedules" ADD COLUMN "created_by_key_id" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    // Revision 1 of each schedule never edited goes into the history first: it exists nowhere
    // else once the column is gone.
    await queryRunner.query(`
      INSERT INTO schedule_revisions (id, tenant_id, schedule_id, revision, change, changed_by_key_id, changed_at, definition)
      SELECT s.id, s.tenant_id, s.id, 1, 'created', s.created_by_key_id, s.created_at,
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
               'calendarId', s.calendar_id, 'maxRuns', s.max_runs,
               'pauseAfterConsecutiveFailures', s.pause_after_failures,
               'lateAfterSeconds', s.late_after_seconds, 'status', 'active')
        FROM schedules s
       WHERE s.revision = 1
         AND NOT EXISTS (SELECT 1 FROM schedule_revisions r WHERE r.schedule_id = s.id AND r.revision = 1)`);
    await queryRunner.query(`ALTER TABLE "schedules" DROP COLUMN "created_by_key_id"`);
  }
}
