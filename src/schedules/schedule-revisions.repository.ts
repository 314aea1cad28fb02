import { Injectable } from '@nestjs/common';
import { SqlRunner, type Row, type Tx } from '../database';
import type { Schedule } from './schedule';
import {
  creationRevisionOf,
  type DefinitionSnapshot,
  type FieldChange,
  type RevisionChange,
  type ScheduleRevision,
} from './schedule-revision';
import {
  INSERT_CREATION_REVISION,
  INSERT_REVISIONS,
  LIST_REVISIONS,
  SELECT_REVISION,
} from './schedule-revisions.sql';

export interface NewRevision {
  tenantId: string;
  scheduleId: string;
  revision: number;
  change: RevisionChange;
  changedByApiKeyId: string | null;
  changes: FieldChange[];
  definition: DefinitionSnapshot;
  note?: string | null;
}

@Injectable()
export class ScheduleRevisionsRepository {
  constructor(private readonly sql: SqlRunner) {}

  async insert(tx: Tx, revisions: readonly NewRevision[]): Promise<void> {
    if (revisions.length === 0) return;
    const rows = revisions.map((r) => ({
      tenant_id: r.tenantId,
      schedule_id: r.scheduleId,
      revision: r.revision,
      change: r.change,
      changed_by_key_id: r.changedByApiKeyId,
      changes: r.changes,
      definition: r.definition,
      note: r.note ?? null,
    }));
    await this.sql.affected(INSERT_REVISIONS, [JSON.stringify(rows)], tx);
  }

  /**
   * Writes revision 1 of `schedule` (still at revision 1, locked by the edit about to change it)
   * from its row into the history; one created before revisions were kept on the row has it
   * already, and keeps it.
   */
  async keepCreation(tx: Tx, schedule: Schedule): Promise<void> {
    const revision = creationRevisionOf(schedule);
    await this.sql.affected(
      INSERT_CREATION_REVISION,
      [
        revision.id,
        schedule.tenantId,
        revision.scheduleId,
        revision.changedByApiKeyId,
        revision.changedAt,
        JSON.stringify(revision.definition),
      ],
      tx,
    );
  }

  async list(
    tenantId: string,
    scheduleId: string,
    limit: number,
    afterId: string | null,
  ): Promise<ScheduleRevision[]> {
    const rows = await this.sql.rows(LIST_REVISIONS, [tenantId, scheduleId, limit, afterId]);
    return rows.map(toRevision);
  }

  async find(
    tenantId: string,
    scheduleId: string,
    revision: number,
  ): Promise<ScheduleRevision | null> {
    const [row] = await this.sql.rows(SELECT_REVISION, [tenantId, scheduleId, revision]);
    return row ? toRevision(row) : null;
  }
}

function toRevision(row: Row): ScheduleRevision {
  return {
    id: row.id as string,
    scheduleId: row.schedule_id as string,
    revision: row.revision as number,
    change: row.change as RevisionChange,
    changedByApiKeyId: row.changed_by_key_id as string | null,
    changedAt: row.changed_at as Date,
    changes: row.changes as FieldChange[],
    definition: row.definition as DefinitionSnapshot,
    note: row.note as string | null,
  };
}
