import { randomUUID } from 'node:crypto';
import type { Client } from 'pg';
import { LIST_RUNS_AFTER, LIST_RUNS_FIRST_PAGE } from '../../src/occurrences/occurrences.sql';
import { AUTO_PAUSE_STILL_DUE } from '../../src/schedules/schedules.sql';
import { explainExecute, type PlanNode, rowsRead } from '../support/plan-rows';
import { genericPlanClient, oneTimeSchedulesBySql, tenantBySql } from '../support/sql-seed';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/**
 * A schedule's history in instant order is a range of the identity key (schedule_id,
 * scheduled_at, revision, origin_key), which does the work of the history index it replaced
 * (migration HistoryByIdentity). With a long history, a page of it and the auto-pause streak read
 * about as many runs as they return, also under a generic plan made while the history was
 * empty. Before that migration such a plan read the page after a cursor through the tenant-wide
 * index, the other schedule's runs included (5,050 rows for a page of 50).
 */
describe('a schedule history read through the identity key', () => {
  let db: TestDatabase;
  let client: Client;
  let tenantId: string;
  let scheduleId: string;
  /** The tenant's other schedule, whose runs all come earlier: a tenant-wide read meets them. */
  let otherScheduleId: string;
  let runIds: string[];
  const RUNS = 5000;
  const PAGE = 50;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = await genericPlanClient(db.url);
    tenantId = await tenantBySql(client, 'historic', {
      maxActiveSchedules: 10,
      dispatchRatePerSecond: 10,
      maxConcurrentRuns: 10,
    });
    await oneTimeSchedulesBySql(client, tenantId, 2, new Date(), 'historic');
    const schedules = await client.query<{ id: string }>(
      `UPDATE schedules SET pause_after_failures = 3, failures_counted_from = '2000-01-01'
        WHERE tenant_id = $1 RETURNING id`,
      [tenantId],
    );
    [scheduleId, otherScheduleId] = schedules.rows.map((row) => row.id);
    // Prepared while the history is empty.
    await client.query({
      name: 'first_page',
      text: LIST_RUNS_FIRST_PAGE,
      values: [tenantId, scheduleId, null, PAGE],
    });
    await client.query({
      name: 'after',
      text: LIST_RUNS_AFTER,
      values: [tenantId, scheduleId, null, PAGE, randomUUID()],
    });
    await client.query({ name: 'streak', text: AUTO_PAUSE_STILL_DUE, values: [scheduleId] });
    // A minute apart, two revisions at some instants (their runs share the instant).
    const runs = await client.query<{ id: string }>(
      `INSERT INTO occurrences (tenant_id, schedule_id, revision, scheduled_at, scheduled_local,
                                state, max_attempts, retry_deadline, fires_at, finished_at)
       SELECT $1, $2, r, at, '2026-12-01T00:00:00', 'SUCCEEDED', 3, at + interval '1 day', at,
              at + interval '1 second'
         FROM generate_series(1, $3::int) AS i,
              LATERAL (SELECT timestamptz '2026-11-01T00:00:00Z' + i * interval '1 minute' AS at) t,
              generate_series(1, CASE WHEN i % 10 = 0 THEN 2 ELSE 1 END) AS r
       RETURNING id`,
      [tenantId, scheduleId, RUNS],
    );
    runIds = runs.rows.map((row) => row.id);
    await client.query(
      `INSERT INTO occurrences (tenant_id, schedule_id, revision, scheduled_at, scheduled_local,
                                state, max_attempts, retry_deadline, fires_at, finished_at)
       SELECT $1, $2, 1, at, '2026-10-01T00:00:00', 'SUCCEEDED', 3, at + interval '1 day', at,
              at + interval '1 second'
         FROM generate_series(1, $3::int) AS i,
              LATERAL (SELECT timestamptz '2026-10-01T00:00:00Z' + i * interval '1 minute'
                         AS at) t`,
      [tenantId, otherScheduleId, RUNS],
    );
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  const explain = (statement: string, values: string): Promise<PlanNode> =>
    explainExecute(client, `${statement}${values}`);

  it('reads a page of a long history, not the history', async () => {
    expect(runIds.length).toBeGreaterThan(RUNS);
    const first = await explain('first_page', `('${tenantId}', '${scheduleId}', NULL, ${PAGE})`);
    expect(first['Actual Rows']).toBe(PAGE);
    expect(rowsRead(first, 'occurrences')).toBeLessThan(3 * PAGE);

    const middle = runIds[Math.floor(runIds.length / 2)];
    const after = await explain(
      'after',
      `('${tenantId}', '${scheduleId}', NULL, ${PAGE}, '${middle}')`,
    );
    expect(after['Actual Rows']).toBe(PAGE);
    expect(rowsRead(after, 'occurrences')).toBeLessThan(3 * PAGE);
  });

  it('reads the latest runs for the auto-pause streak, not the history', async () => {
    const streak = await explain('streak', `('${scheduleId}')`);
    expect(rowsRead(streak, 'occurrences')).toBeLessThan(3 * PAGE);
  });
});
