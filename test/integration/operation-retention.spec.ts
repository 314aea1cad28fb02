import { SqlRunner } from '../../src/database';
import { RelayService } from '../../src/relay';
import { startTestApp, TestApp } from '../support/test-app';

/** Finished bulk operations do not pile up: the relay forgets them after their retention. */
describe('finished operation retention', () => {
  let t: TestApp;
  let sql: SqlRunner;

  beforeAll(async () => {
    t = await startTestApp({ ROLES: 'api,relay', RELAY_FINISHED_OPERATION_RETENTION_DAYS: '30' });
    sql = t.app.get(SqlRunner);
  });
  afterAll(() => t.close());

  it('prunes completed bulk operations past the retention, never running or recent ones', async () => {
    const tenant = await t.createTenant();
    const insert = (status: string, finishedDaysAgo: number | null) =>
      sql.rows<{ id: string }>(
        `INSERT INTO bulk_operations (tenant_id, kind, status, total, finished_at, created_at)
         VALUES ($1, 'cancel', $2, 0,
                 CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(days => $3::int) END,
                 now() - interval '60 days')
         RETURNING id`,
        [tenant.id, status, finishedDaysAgo],
      );
    const [old] = await insert('completed', 31);
    const [recent] = await insert('completed', 2);
    const [running] = await insert('running', null);
    await t.app.get(RelayService).tick();
    const left = await sql.rows<{ id: string }>(
      `SELECT id FROM bulk_operations WHERE tenant_id = $1 ORDER BY id`,
      [tenant.id],
    );
    expect(left.map((r) => r.id).sort()).toEqual([recent.id, running.id].sort());
    expect(left.map((r) => r.id)).not.toContain(old.id);
  });
});
