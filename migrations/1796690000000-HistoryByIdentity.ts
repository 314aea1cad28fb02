import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The identity key is reordered to (schedule_id, scheduled_at, revision, origin_key) and does the
 * work of occurrences_history_idx (schedule_id, scheduled_at, id), which goes. Every version of a
 * run (created, claimed, ended: no update of a run is HOT, as its state is in partial indexes'
 * predicates) was an entry in both: three index entries a run, and their WAL records, go. The
 * key is the same set of columns, so it refuses the same duplicates, and `ON CONFLICT ON
 * CONSTRAINT occurrences_identity_key` names it as before. A schedule's runs in instant order
 * are a range of it, as they were of the history index: the history listing pages in the key's
 * own order (scheduled_at, revision, origin_key); what still orders by (scheduled_at, id) sorts
 * only runs of one instant by id (an incremental sort: one instant's runs are its revisions and
 * origins, a handful).
 */
export class HistoryByIdentity1796690000000 implements MigrationInterface {
  name = 'HistoryByIdentity1796690000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_identity_key",
        ADD CONSTRAINT "occurrences_identity_key"
          UNIQUE ("schedule_id", "scheduled_at", "revision", "origin_key")`);
    await queryRunner.query(`DROP INDEX "occurrences_history_idx"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE INDEX "occurrences_history_idx"
        ON "occurrences" ("schedule_id", "scheduled_at", "id")`);
    await queryRunner.query(`
      ALTER TABLE "occurrences" DROP CONSTRAINT "occurrences_identity_key",
        ADD CONSTRAINT "occurrences_identity_key"
          UNIQUE ("schedule_id", "revision", "scheduled_at", "origin_key")`);
  }
}
