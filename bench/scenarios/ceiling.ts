import { Client } from 'pg';
import { PgBoss } from 'pg-boss';
import { PGBOSS_SCHEMA, RUNS_QUEUE } from '../../src/queue';
import type { BenchContext, ScenarioResult } from '../context';
import { describeCost, OccurrenceCostMeter } from '../occurrence-cost';
import { ResourceMeter } from '../resources';

const BATCH = 500;
const CONCURRENCY_LEVELS = [2, 4];

/**
 * ceiling: the database work one occurrence costs dueline, as bare batched SQL on the same
 * Postgres and schema (our tables with their indexes, pg-boss's job table): in one transaction
 * insert the occurrences and their queue jobs; in a second, fetch the jobs (UPDATE … SKIP LOCKED),
 * claim the runs (fenced UPDATE) and insert the attempts; in a third, complete runs, attempts and
 * jobs. No HTTP, no application code, 500 occurrences per statement, N loops in parallel: the most
 * occurrences per second this machine's Postgres can carry for this work.
 */
export async function runCeiling(ctx: BenchContext): Promise<ScenarioResult[]> {
  console.log(`\n== ceiling: bare batched SQL, ${ctx.flags.ceilingSeconds}s per level`);
  const db = await ctx.pg.freshDatabase('ceiling');
  try {
    const { tenantId, scheduleId } = await prepare(db.url);
    const levels: Array<{ concurrency: number; perSecond: number }> = [];
    const meter = new ResourceMeter(ctx.pg.postmasterPid);
    // The ceiling's clients write one statement at a time: each round trip is a wait.
    const traffic = { roundTrips: 0 };
    const costMeter = new OccurrenceCostMeter(ctx.pg, db, () =>
      Promise.resolve({ roundTrips: traffic.roundTrips, waits: traffic.roundTrips }),
    );
    meter.start([]);
    await costMeter.start();
    let runs = 0;
    for (const concurrency of CONCURRENCY_LEVELS) {
      const deadline = Date.now() + ctx.flags.ceilingSeconds * 1000;
      const started = performance.now();
      const counts = await Promise.all(
        Array.from({ length: concurrency }, (_, lane) =>
          loop(db.url, { tenantId, scheduleId, lane: lane + concurrency * 10, deadline }, traffic),
        ),
      );
      runs += counts.reduce((a, b) => a + b, 0);
      const seconds = (performance.now() - started) / 1000;
      const perSecond = Math.round(counts.reduce((a, b) => a + b, 0) / seconds);
      levels.push({ concurrency, perSecond });
      console.log(`  ${concurrency} loop(s): ${perSecond} occurrences/s`);
    }
    const resources = meter.stop();
    const cost = await costMeter.stop(runs, null);
    console.log(`  ${describeCost(cost)}`);
    const best = Math.max(...levels.map((l) => l.perSecond));
    return [
      {
        scenario: 'ceiling',
        system: 'bare SQL',
        label: 'ceiling (bare batched SQL)',
        params: { batch: BATCH, levels: CONCURRENCY_LEVELS, seconds: ctx.flags.ceilingSeconds },
        delivery: null,
        resources,
        extra: { ceilingPerSecond: best, levels, cost },
        notes: [],
      },
    ];
  } finally {
    await db.drop().catch(() => undefined);
  }
}

/** A tenant and schedule for the foreign keys, and the runs queue as the service declares it. */
async function prepare(url: string): Promise<{ tenantId: string; scheduleId: string }> {
  const boss = new PgBoss({
    connectionString: url,
    schema: PGBOSS_SCHEMA,
    schedule: false,
    supervise: false,
  });
  await boss.start();
  await boss.createQueue(RUNS_QUEUE, { notify: true, retryLimit: 2, retryDelay: 1 });
  await boss.stop({ graceful: false, close: true });
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const t = await client.query<{ id: string }>(
      `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
       VALUES ('ceiling', 1000, 100000, 100000) RETURNING id`,
    );
    const target = await client.query<{ id: string }>(
      `INSERT INTO targets (tenant_id, name, url) VALUES ($1, 'ceiling', 'http://127.0.0.1:9/') RETURNING id`,
      [t.rows[0].id],
    );
    const s = await client.query<{ id: string }>(
      `INSERT INTO schedules (tenant_id, name, target_id, status, kind, cron, timezone,
                              missed_run_policy, max_catch_up, overlap_policy, retry_max_attempts,
                              retry_initial_delay_ms, retry_max_delay_ms, retry_deadline_seconds)
       VALUES ($1, 'ceiling', $2, 'active', 'cron', '* * * * * *', 'UTC',
               'latest', 10, 'allow', 3, 1000, 300000, 3600) RETURNING id`,
      [t.rows[0].id, target.rows[0].id],
    );
    return { tenantId: t.rows[0].id, scheduleId: s.rows[0].id };
  } finally {
    await client.end();
  }
}

const DISPATCH = `
  WITH o AS (
    INSERT INTO occurrences (tenant_id, schedule_id, revision, scheduled_at, fires_at,
                             scheduled_local, state, max_attempts, retry_deadline)
    SELECT $1, $2, 1, i.at, i.at, 'local', 'QUEUED', 3, now() + interval '1 hour'
      FROM generate_series(1, $4) g,
           LATERAL (SELECT timestamptz '2020-01-01'
                           + make_interval(secs => ($3::bigint + g) / 1000.0) AS at) i
    RETURNING id, tenant_id)
  INSERT INTO ${PGBOSS_SCHEMA}.job (name, data, retry_limit, retry_delay)
  SELECT $5, jsonb_build_object('runId', o.id, 'tenantId', o.tenant_id), 2, 1 FROM o`;

const FETCH = `
  WITH next AS (
    SELECT id FROM ${PGBOSS_SCHEMA}.job
     WHERE name = $1 AND state = 'created' AND start_after < now()
     ORDER BY priority DESC, created_on, id
     LIMIT $2
     FOR UPDATE SKIP LOCKED)
  UPDATE ${PGBOSS_SCHEMA}.job j SET state = 'active', started_on = now()
    FROM next WHERE j.name = $1 AND j.id = next.id
  RETURNING j.id, (j.data->>'runId')::uuid AS run_id`;

const CLAIM = `
  WITH claimed AS (
    UPDATE occurrences o
       SET state = 'RUNNING', fencing_token = o.fencing_token + 1,
           attempt_count = o.attempt_count + 1, lease_until = now() + interval '30 seconds',
           worker_id = $2, updated_at = now()
     WHERE o.id = ANY($1::uuid[]) AND o.state = 'QUEUED' AND now() >= o.scheduled_at
    RETURNING o.id, o.tenant_id, o.fencing_token, o.attempt_count, o.scheduled_at)
  INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token, scheduled_at)
  SELECT id, attempt_count, tenant_id, $2, fencing_token, scheduled_at FROM claimed`;

const COMPLETE_RUNS = `
  UPDATE occurrences SET state = 'SUCCEEDED', lease_until = NULL, finished_at = now(),
         updated_at = now()
   WHERE id = ANY($1::uuid[]) AND state = 'RUNNING'`;

const COMPLETE_ATTEMPTS = `
  UPDATE attempts SET ended_at = now(), outcome = 'succeeded', http_status = 200, duration_ms = 1
   WHERE run_id = ANY($1::uuid[]) AND attempt_no = 1`;

const COMPLETE_JOBS = `
  UPDATE ${PGBOSS_SCHEMA}.job SET state = 'completed', completed_on = now()
   WHERE name = $1 AND id = ANY($2::uuid[])`;

async function loop(
  url: string,
  o: { tenantId: string; scheduleId: string; lane: number; deadline: number },
  traffic: { roundTrips: number },
): Promise<number> {
  const client = new Client({ connectionString: url });
  // Counted as the service counts its own (dueline_db_round_trips_total): one per ReadyForQuery.
  client.connection.on('readyForQuery', () => traffic.roundTrips++);
  await client.connect();
  let done = 0;
  let seq = o.lane * 1_000_000_000;
  try {
    while (Date.now() < o.deadline) {
      await tx(client, () =>
        client.query(DISPATCH, [o.tenantId, o.scheduleId, seq, BATCH, RUNS_QUEUE]),
      );
      seq += BATCH;
      const jobs = await tx(client, async () => {
        const fetched = await client.query<{ id: string; run_id: string }>(FETCH, [
          RUNS_QUEUE,
          BATCH,
        ]);
        const runIds = fetched.rows.map((r) => r.run_id);
        await client.query(CLAIM, [runIds, `ceiling-${o.lane}`]);
        return fetched.rows;
      });
      await tx(client, async () => {
        const runIds = jobs.map((j) => j.run_id);
        await client.query(COMPLETE_RUNS, [runIds]);
        await client.query(COMPLETE_ATTEMPTS, [runIds]);
        await client.query(COMPLETE_JOBS, [RUNS_QUEUE, jobs.map((j) => j.id)]);
      });
      done += jobs.length;
    }
  } finally {
    await client.end();
  }
  return done;
}

async function tx<T>(client: Client, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
