import { Client } from 'pg';
import { SHARD_COUNT } from '../../src/due-index';
import {
  CLAIM_DUE_ENTRIES,
  CLAIM_FRESHEST_DUE,
  DELETE_DUE_ENTRIES,
  NEXT_DUE_IN_SHARDS,
} from '../../src/due-index/due-index.sql';
import { explainExecute, type PlanNode, planNodes, rowsRead } from '../support/plan-rows';
import { createTestDatabase, type TestDatabase } from '../support/test-database';

/** Rows that scans of the due index produced or filtered out, over the whole plan. */
const dueRowsRead = (node: PlanNode): number => rowsRead(node, 'due_index');

const ALL_SHARDS = Array.from({ length: SHARD_COUNT }, (_, i) => i);
const EVEN_SHARDS = ALL_SHARDS.filter((shard) => shard % 2 === 0);
const FLOOD = 3000;
const BATCH = 100;

/**
 * The poller's backlog batch (CLAIM_DUE_ENTRIES) while a flood of entries due at one instant
 * waits in the index: it must read about the batch it takes, not every due entry (a sort of the
 * whole flood for each of its batches), with the plan Postgres caches for a statement prepared
 * while the index was empty as with a plan made for the flood, and still take the oldest first.
 */
describe('due index plans: a backlog batch beside a flood', () => {
  let db: TestDatabase;
  let generic: Client;
  let custom: Client;
  const floodAt = new Date(Date.now() - 1000);
  const earlier = new Date(floodAt.getTime() - 5000);
  /** Entries due before the flood's instant, one in each of a few shards. */
  const EARLIER_SHARDS = [3, 40, 77, 126];

  beforeAll(async () => {
    db = await createTestDatabase();
    generic = new Client({ connectionString: db.url });
    custom = new Client({ connectionString: db.url });
    await Promise.all([generic.connect(), custom.connect()]);
    await generic.query(`SET plan_cache_mode = force_generic_plan`);
    await custom.query(`SET plan_cache_mode = force_custom_plan`);
    for (const client of [generic, custom]) {
      // Prepared (and, for `generic`, planned) now, while the index is empty.
      await client.query('BEGIN');
      await client.query({
        name: 'claim_due',
        text: CLAIM_DUE_ENTRIES,
        values: [ALL_SHARDS, BATCH, 300, null, null],
      });
      await client.query({
        name: 'claim_freshest',
        text: CLAIM_FRESHEST_DUE,
        values: [ALL_SHARDS, floodAt, BATCH, 300, null],
      });
      await client.query('ROLLBACK');
      await client.query({
        name: 'next_due',
        text: NEXT_DUE_IN_SHARDS,
        values: [ALL_SHARDS, null, null],
      });
    }
    // The flood across every shard, a few entries older than it, and later entries from ten
    // minutes on (from a second on, a test that ran more than a second after this, on a busy
    // host, found the first of them due within its horizon).
    await generic.query(
      `INSERT INTO due_index (shard, due_at, schedule_id, tenant_id, revision)
       SELECT i % $2::int, $1::timestamptz, gen_random_uuid(), gen_random_uuid(), 1
         FROM generate_series(1, $3::int) AS i
       UNION ALL
       SELECT s, $4::timestamptz, gen_random_uuid(), gen_random_uuid(), 1
         FROM unnest($5::int[]) AS s
       UNION ALL
       SELECT i % $2::int, now() + make_interval(mins => 10, secs => i), gen_random_uuid(),
              gen_random_uuid(), 1
         FROM generate_series(1, $3::int) AS i`,
      [floodAt, SHARD_COUNT, FLOOD, earlier, EARLIER_SHARDS],
    );
    await generic.query('ANALYZE due_index');
  });

  afterAll(async () => {
    await Promise.all([generic?.end(), custom?.end()]);
    await db?.drop();
  });

  const explain = (client: Client, shards: readonly number[]): Promise<PlanNode> =>
    explainExecute(client, `claim_due('{${shards.join(',')}}', ${BATCH}, 300, NULL, NULL)`);

  const claim = async (client: Client, shards: readonly number[]) => {
    const { rows } = await client.query<{ shard: number; due_at: Date }>({
      name: 'claim_due',
      text: CLAIM_DUE_ENTRIES,
      values: [shards, BATCH, 300, null, null],
    });
    return rows;
  };

  for (const [plan, client] of [
    ['the generic plan made while the index was empty', () => generic],
    ['a plan made for the flood', () => custom],
  ] as const) {
    it(`reads about the batch it takes, not the flood (${plan})`, async () => {
      await client().query('BEGIN');
      try {
        const read = dueRowsRead(await explain(client(), ALL_SHARDS));
        // One probe for the horizon, then the batch (with the batch's share of the entries a
        // concurrent claim holds, none here): the flood's 3,000 are not read.
        expect(read).toBeLessThan(2 * BATCH);
      } finally {
        await client().query('ROLLBACK');
      }
    });

    it(`reads no further than its horizon when less than a batch is due (${plan})`, async () => {
      await client().query('BEGIN');
      try {
        // The flood taken: the earlier entries are due, the day of later ones is not.
        await client().query(`DELETE FROM due_index WHERE due_at = $1`, [floodAt]);
        const plan = await explain(client(), ALL_SHARDS);
        expect(plan['Actual Rows']).toBe(EARLIER_SHARDS.length);
        // Not the 3,000 later entries (a horizon read as a join condition would read them all).
        expect(dueRowsRead(plan)).toBeLessThan(2 * BATCH);
      } finally {
        await client().query('ROLLBACK');
      }
    });

    it(`looks past the flood for the fresh lane no further than its horizon (${plan})`, async () => {
      await client().query('BEGIN');
      try {
        const after = `'${floodAt.toISOString()}'`;
        const fresh = await explainExecute(
          client(),
          `claim_freshest('{${ALL_SHARDS.join(',')}}', ${after}, ${BATCH}, 300, NULL)`,
        );
        // Nothing falls due after the flood within the horizon: the lane takes nothing, reading
        // neither the flood nor the day of later entries (newest first from the horizon down,
        // a horizon read as a join condition would read them all from the latest).
        expect(fresh['Actual Rows']).toBe(0);
        expect(dueRowsRead(fresh)).toBeLessThan(2 * BATCH);
      } finally {
        await client().query('ROLLBACK');
      }
    });

    it(`finds the held shards' next entry in one probe, past a floor too (${plan})`, async () => {
      const next = await explainExecute(
        client(),
        `next_due('{${ALL_SHARDS.join(',')}}', NULL, NULL)`,
      );
      // One probe, not one per shard (128 rows read for one found).
      expect(dueRowsRead(next)).toBeLessThan(10);
      const { rows } = await client().query<{ next_due_at: Date; wait_ms: number }>({
        name: 'next_due',
        text: NEXT_DUE_IN_SHARDS,
        values: [EVEN_SHARDS, null, null],
      });
      expect(rows[0].next_due_at.getTime()).toBe(earlier.getTime());
      expect(rows[0].wait_ms).toBe(0);
      const after = `'${floodAt.toISOString()}'`;
      const past = await explainExecute(
        client(),
        `next_due('{${ALL_SHARDS.join(',')}}', ${after}, NULL)`,
      );
      // Past the flood's instant: the floor bounds the probe, the flood is not read.
      expect(dueRowsRead(past)).toBeLessThan(10);
      const { rows: later } = await client().query<{ next_due_at: Date; wait_ms: number }>({
        name: 'next_due',
        text: NEXT_DUE_IN_SHARDS,
        values: [ALL_SHARDS, floodAt, null],
      });
      expect(later[0].next_due_at.getTime()).toBeGreaterThan(floodAt.getTime());
      expect(later[0].wait_ms).toBeGreaterThan(0);
    });

    it(`takes the oldest entries first, in the shards it holds (${plan})`, async () => {
      await client().query('BEGIN');
      try {
        const all = await claim(client(), ALL_SHARDS);
        expect(all).toHaveLength(BATCH);
        const times = all.map((row) => row.due_at.getTime());
        expect(times.slice(0, EARLIER_SHARDS.length)).toEqual(
          EARLIER_SHARDS.map(() => earlier.getTime()),
        );
        expect(times.slice(EARLIER_SHARDS.length).every((t) => t === floodAt.getTime())).toBe(true);
      } finally {
        await client().query('ROLLBACK');
      }
      await client().query('BEGIN');
      try {
        const even = await claim(client(), EVEN_SHARDS);
        expect(even).toHaveLength(BATCH);
        expect(even.every((row) => row.shard % 2 === 0)).toBe(true);
        expect(even.filter((row) => row.due_at.getTime() === earlier.getTime())).toHaveLength(
          EARLIER_SHARDS.filter((shard) => shard % 2 === 0).length,
        );
        const half = dueRowsRead(await explain(client(), EVEN_SHARDS));
        // The odd shards' flood entries it passes over are index entries, filtered in the
        // index: about as many as it takes.
        expect(half).toBeLessThan(3 * BATCH);
      } finally {
        await client().query('ROLLBACK');
      }
    });
  }

  it('finds an entry by its schedule (the key leads with it), with two indexes to write', async () => {
    // Each entry written updates every index of the table: the key and the instant order.
    const { rows: indexes } = await generic.query<{ name: string; definition: string }>(
      `SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE tablename = 'due_index' ORDER BY indexname`,
    );
    expect(indexes.map((i) => i.name)).toEqual(['due_index_by_instant_idx', 'due_index_pkey']);
    expect(indexes[1].definition).toContain('(schedule_id, shard, due_at)');
    const { rows: taken } = await generic.query<{ shard: number; due_at: string; id: string }>(
      `SELECT shard, due_at::text AS due_at, schedule_id AS id FROM due_index
        WHERE due_at = $1 LIMIT ${BATCH}`,
      [floodAt],
    );
    await generic.query(`PREPARE delete_due(smallint[], text[], uuid[]) AS ${DELETE_DUE_ENTRIES}`);
    await generic.query('BEGIN');
    try {
      const values = (list: unknown[]) => `'{${list.join(',')}}'`;
      const plan = await explainExecute(
        generic,
        `delete_due(${values(taken.map((t) => t.shard))}, ${values(taken.map((t) => `"${t.due_at}"`))}, ${values(taken.map((t) => t.id))})`,
      );
      // One probe of the key per entry deleted: the rest of the flood is not read.
      expect(dueRowsRead(plan)).toBe(BATCH);
      expect(planNodes(plan).some((node) => node['Index Name'] === 'due_index_pkey')).toBe(true);
    } finally {
      await generic.query('ROLLBACK');
    }
  });
});
