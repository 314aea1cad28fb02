import { Client } from 'pg';
import { SELECT_TARGETS_FOR_DISPATCH } from '../../src/targets/targets.sql';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

interface PlanNode {
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows that scans of the targets table produced or filtered out, over all their loops. */
function targetRowsRead(node: PlanNode): number {
  const own =
    node['Relation Name'] === 'targets'
      ? ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) *
        (node['Actual Loops'] ?? 1)
      : 0;
  return own + (node.Plans ?? []).reduce((sum, child) => sum + targetRowsRead(child), 0);
}

/**
 * The worker reads the targets of every fetched batch: what that costs must follow the batch,
 * not the number of tenants. With 2,000 tenants' targets, a batch naming five reads about five,
 * in the custom plan of a first execution and the generic plan a pooled connection settles on.
 */
describe('the worker read of a batch of targets', () => {
  const TENANTS = 2000;
  let db: TestDatabase;
  let client: Client;
  let pairs: Array<{ tenant_id: string; id: string }>;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query(
      `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
       SELECT 'tenant-' || i, 100, 10, 10 FROM generate_series(1, $1::int) AS i`,
      [TENANTS],
    );
    await client.query(
      `INSERT INTO targets (tenant_id, name, url) SELECT id, 'sink', 'http://127.0.0.1:9/' FROM tenants`,
    );
    await client.query('ANALYZE tenants');
    await client.query('ANALYZE targets');
    const picked = await client.query<{ tenant_id: string; id: string }>(
      `SELECT tenant_id, id FROM targets ORDER BY id LIMIT 5`,
    );
    pairs = picked.rows;
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it.each(['force_custom_plan', 'force_generic_plan'])(
    'probes the targets it names and no others (%s)',
    async (mode) => {
      await client.query(`SET plan_cache_mode = ${mode}`);
      const name = `read_${mode}`;
      const values = [pairs.map((p) => p.tenant_id), pairs.map((p) => p.id)];
      const found = await client.query({ name, text: SELECT_TARGETS_FOR_DISPATCH, values });
      expect(found.rows.map((row: { id: string }) => row.id).sort()).toEqual(
        pairs.map((p) => p.id).sort(),
      );
      const literal = (ids: string[]) => `'{${ids.join(',')}}'`;
      const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
        `EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE ${name}(${literal(values[0])}, ${literal(values[1])})`,
      );
      expect(targetRowsRead(rows[0]['QUERY PLAN'][0].Plan)).toBeLessThanOrEqual(pairs.length);
    },
  );
});
