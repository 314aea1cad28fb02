import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Run history in time-range partitions (issue 14). `occurrences` and `attempts` become
 * declaratively partitioned by RANGE (scheduled_at): an attempt carries its run's
 * `scheduled_at` (denormalised, never changed), so a run and its attempts sit in partitions of
 * the same range and are dropped together, whole, by the relay's history maintenance
 * (`history/`) instead of being deleted row by row.
 *
 * A unique index on a partitioned table must contain the partition key, so:
 * - the primary keys become occurrences (id, scheduled_at) and attempts
 *   (run_id, attempt_no, scheduled_at);
 * - `occurrences_identity_key` (schedule_id, revision, scheduled_at, origin_key) already
 *   contains it and stays one unique constraint over the whole table under the same name
 *   (`ON CONFLICT ON CONSTRAINT occurrences_identity_key` relies on it): two rows of one
 *   identity have the same scheduled_at, hence the same partition, whose unique index refuses
 *   the second;
 * - attempts reference their run by (run_id, scheduled_at) (`attempts_run_id_fkey`, composite).
 * No other table has a foreign key to runs: `occurrences.replay_of`, `bulk_operation_items.run_id`,
 * `.result_run_id` and `backfill_instants.run_id` are plain ids (see README "History and
 * retention": they may outlive the run they name).
 *
 * The rows move without loss: new tables are created beside the old ones, with a partition
 * for every instant before today (one, as wide as the existing history, dropped whole once it
 * is older than the retention) and a DEFAULT partition for everything else; the maintenance
 * loop then creates the ranges from today on and moves what the DEFAULT holds into them. The
 * old tables are dropped and the new ones take their names, indexes and constraints. down()
 * restores the plain tables the same way.
 */
export class PartitionedHistory1796600000000 implements MigrationInterface {
  name = 'PartitionedHistory1796600000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "occurrences_partitioned"
        (LIKE "occurrences" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)
        PARTITION BY RANGE ("scheduled_at")`);
    await queryRunner.query(`
      CREATE TABLE "attempts_partitioned"
        (LIKE "attempts" INCLUDING DEFAULTS INCLUDING CONSTRAINTS,
         "scheduled_at" timestamptz NOT NULL)
        PARTITION BY RANGE ("scheduled_at")`);
    const [{ oldest, today }] = (await queryRunner.query(`
      SELECT date_trunc('day', min(scheduled_at) AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS oldest,
             date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS today
        FROM occurrences`)) as Array<{ oldest: Date | null; today: Date }>;
    if (oldest && oldest < today) {
      // Everything before today in one range: dropped as a whole once it is old enough.
      for (const table of ['occurrences', 'attempts']) {
        await queryRunner.query(
          `CREATE TABLE "${table}_p${partitionStamp(oldest)}" PARTITION OF "${table}_partitioned"
             FOR VALUES FROM ('${oldest.toISOString()}') TO ('${today.toISOString()}')`,
        );
      }
    }
    for (const table of ['occurrences', 'attempts']) {
      await queryRunner.query(
        `CREATE TABLE "${table}_default" PARTITION OF "${table}_partitioned" DEFAULT`,
      );
    }
    await queryRunner.query(`INSERT INTO "occurrences_partitioned" SELECT * FROM "occurrences"`);
    await queryRunner.query(`
      INSERT INTO "attempts_partitioned"
      SELECT a.*, o.scheduled_at FROM "attempts" a JOIN "occurrences" o ON o.id = a.run_id`);
    await queryRunner.query(`DROP TABLE "attempts"`);
    await queryRunner.query(`DROP TABLE "occurrences"`);
    await queryRunner.query(`ALTER TABLE "occurrences_partitioned" RENAME TO "occurrences"`);
    await queryRunner.query(`ALTER TABLE "attempts_partitioned" RENAME TO "attempts"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        ADD CONSTRAINT "occurrences_pkey" PRIMARY KEY ("id", "scheduled_at"),
        ADD CONSTRAINT "occurrences_identity_key"
          UNIQUE ("schedule_id", "revision", "scheduled_at", "origin_key")`);
    await addRunLinks(queryRunner);
    await queryRunner.query(`
      ALTER TABLE "attempts"
        ADD CONSTRAINT "attempts_pkey" PRIMARY KEY ("run_id", "attempt_no", "scheduled_at"),
        ADD CONSTRAINT "attempts_run_id_fkey" FOREIGN KEY ("run_id", "scheduled_at")
          REFERENCES "occurrences"("id", "scheduled_at") ON DELETE CASCADE`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE "occurrences_plain" (LIKE "occurrences" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await queryRunner.query(`
      CREATE TABLE "attempts_plain" (LIKE "attempts" INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`);
    await queryRunner.query(`ALTER TABLE "attempts_plain" DROP COLUMN "scheduled_at"`);
    await queryRunner.query(`INSERT INTO "occurrences_plain" SELECT * FROM "occurrences"`);
    await queryRunner.query(`
      INSERT INTO "attempts_plain"
      SELECT run_id, attempt_no, tenant_id, worker_id, fencing_token, started_at, ended_at,
             outcome, http_status, duration_ms, error, trace_id, response_headers, response_body
        FROM "attempts"`);
    // Dropping a partitioned table drops its partitions.
    await queryRunner.query(`DROP TABLE "attempts"`);
    await queryRunner.query(`DROP TABLE "occurrences"`);
    await queryRunner.query(`ALTER TABLE "occurrences_plain" RENAME TO "occurrences"`);
    await queryRunner.query(`ALTER TABLE "attempts_plain" RENAME TO "attempts"`);
    await queryRunner.query(`
      ALTER TABLE "occurrences"
        ADD CONSTRAINT "occurrences_pkey" PRIMARY KEY ("id"),
        ADD CONSTRAINT "occurrences_identity_key"
          UNIQUE ("schedule_id", "revision", "scheduled_at", "origin_key")`);
    await addRunLinks(queryRunner);
    await queryRunner.query(`
      ALTER TABLE "attempts"
        ADD CONSTRAINT "attempts_pkey" PRIMARY KEY ("run_id", "attempt_no"),
        ADD CONSTRAINT "attempts_run_id_fkey" FOREIGN KEY ("run_id")
          REFERENCES "occurrences"("id") ON DELETE CASCADE`);
  }
}

/** The foreign keys and indexes of `occurrences`, the same in both layouts. */
async function addRunLinks(queryRunner: QueryRunner): Promise<void> {
  await queryRunner.query(`
    ALTER TABLE "occurrences"
      ADD CONSTRAINT "occurrences_tenant_id_fkey" FOREIGN KEY ("tenant_id")
        REFERENCES "tenants"("id") ON DELETE CASCADE,
      ADD CONSTRAINT "occurrences_schedule_id_fkey" FOREIGN KEY ("schedule_id")
        REFERENCES "schedules"("id") ON DELETE CASCADE`);
  for (const [name, definition] of RUN_INDEXES) {
    await queryRunner.query(`CREATE INDEX "${name}" ON "occurrences" ${definition}`);
  }
}

const RUN_INDEXES: ReadonlyArray<readonly [string, string]> = [
  [
    'occurrences_active_by_schedule_idx',
    `("schedule_id") WHERE state IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`,
  ],
  [
    'occurrences_admitted_by_tenant_idx',
    `("tenant_id") WHERE state = 'QUEUED' AND admitted_at IS NOT NULL`,
  ],
  ['occurrences_failed_recent_idx', `("finished_at") WHERE state IN ('FAILED', 'UNKNOWN')`],
  ['occurrences_history_idx', `("schedule_id", "scheduled_at", "id")`],
  [
    'occurrences_holding_by_target_idx',
    `("target_id") WHERE state = 'RUNNING' OR (state = 'QUEUED' AND admitted_at IS NOT NULL)`,
  ],
  ['occurrences_lease_idx', `("lease_until") WHERE state = 'RUNNING'`],
  ['occurrences_queued_idx', `("created_at") WHERE state = 'QUEUED'`],
  ['occurrences_retry_idx', `("next_attempt_at") WHERE state = 'RETRY_WAIT'`],
  ['occurrences_running_by_tenant_idx', `("tenant_id") WHERE state = 'RUNNING'`],
  ['occurrences_tenant_search_idx', `("tenant_id", "scheduled_at", "id")`],
  [
    'occurrences_waiting_admission_idx',
    `("tenant_id", "priority", "scheduled_at", "id") WHERE state = 'QUEUED' AND admitted_at IS NULL
       AND reason IN ('throttled_concurrency', 'throttled_rate', 'throttled_fleet')`,
  ],
  [
    'occurrences_waiting_deadline_idx',
    `("start_deadline") WHERE state = 'QUEUED' AND admitted_at IS NULL AND start_deadline IS NOT NULL`,
  ],
  [
    'occurrences_waiting_target_idx',
    `("tenant_id", "target_id", "priority", "scheduled_at", "id") WHERE state = 'QUEUED'
       AND admitted_at IS NULL AND reason IN ('throttled_target', 'target_backoff')`,
  ],
];

/** The name suffix of a partition starting at `from` (UTC), as the history maintenance names them. */
function partitionStamp(from: Date): string {
  const iso = from.toISOString();
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}_${iso.slice(11, 13)}${iso.slice(14, 16)}`;
}
