import { randomUUID } from 'node:crypto';
import {
  CLAIM_ADMITTED_RUNS,
  CLAIM_RUNS,
  LOCK_SCHEDULES_OF_CLAIMS,
} from '../../src/admission/admission.sql';
import { instantBounds, SqlRunner, UNBOUNDED, type InstantBounds } from '../../src/database';
import { END_ATTEMPTS } from '../../src/attempts/attempts.sql';
import {
  FINISH_UNDER_FENCE,
  HEARTBEAT,
  LOCK_HELD_RUNS,
  LOCK_SCHEDULES_OF_RUNS,
  TRANSITION_UNDER_FENCE,
} from '../../src/execution/execution.sql';
import { CONCURRENT_POLICIES } from '../../src/overlap';
import { HISTORY_SUMMARISER, HistoryService, type HistorySummariser } from '../../src/history';
import {
  HistoryPartitionsRepository,
  type HistoryPartition,
} from '../../src/history/history-partitions.repository';
import { partitionName } from '../../src/history/partition-names';
import { HistoryMaintenanceLoop } from '../../src/relay';
import { ExecutionWorld, runEngine, startExecutionWorld } from './execution.fixtures';
import { carriesRun } from '../support/run-jobs';
import type { RunsJob } from '../../src/queue';

const HOUR = 3600_000;

/**
 * The run history in time-range partitions: created ahead once whoever calls, DEFAULT rows
 * moved into the range that covers them, expired partitions dropped whole unless a live run is
 * in them, the identity key and the fence unchanged, the claim confined to one partition.
 */
describe('history partitions', () => {
  let w: ExecutionWorld;
  let history: HistoryService;
  let partitions: HistoryPartitionsRepository;
  let sql: SqlRunner;

  beforeAll(async () => {
    w = await startExecutionWorld('api,relay', {
      HISTORY_PARTITION_MINUTES: '60',
      HISTORY_PARTITIONS_AHEAD: '2',
      HISTORY_MAINTENANCE_INTERVAL_MS: '3600000',
      HISTORY_RETENTION_OVERRIDE_MINUTES: '1440',
      // The relay's sweeper runs: no lease may run out while a test holds a run.
      EXECUTION_LEASE_MS: '120000',
    });
    // The loop's first round (at start) is done, and no other comes during the tests.
    await w.t.app.get(HistoryMaintenanceLoop).beforeApplicationShutdown();
    history = w.t.app.get(HistoryService);
    partitions = w.t.app.get(HistoryPartitionsRepository);
    sql = w.t.app.get(SqlRunner);
  });
  afterAll(() => w.close());

  const partitionOf = async (table: string, where: string, params: unknown[]): Promise<string> =>
    (
      await w.db.query(`SELECT tableoid::regclass::text AS p FROM ${table} WHERE ${where}`, params)
    )[0]?.p;
  const dbNow = async (): Promise<Date> => (await w.db.query('SELECT now() AS now'))[0].now;
  const currentWindow = async (): Promise<Date> => {
    const now = await dbNow();
    return new Date(Math.floor(now.getTime() / HOUR) * HOUR);
  };
  const tableExists = async (name: string): Promise<boolean> =>
    (await w.db.query(`SELECT to_regclass($1) IS NOT NULL AS e`, [name]))[0].e;
  const addAttempt = (runId: string, scheduledAt: Date, attemptNo = 1) =>
    w.db.query(
      `INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token, scheduled_at,
                             ended_at, outcome)
       VALUES ($1, $2::int, $3, 'w', $2::bigint, $4, now(), 'failed')`,
      [runId, attemptNo, w.tenant.id, scheduledAt],
    );

  /** A partition dropped as maintenance drops it (the parents' lock tried until granted). */
  const dropNow = (tx: Parameters<typeof partitions.drop>[0], partition: HistoryPartition) =>
    partitions.underParentsLock(tx, () => partitions.drop(tx, partition));
  /**
   * Another session's transaction that runs `statement` and holds what it locked for `ms`;
   * `ended` resolves once it has committed (`onEnd` is called just before the commit).
   */
  const holdLocks = async (
    statement: string,
    params: unknown[],
    ms: number,
    onEnd: () => void = () => undefined,
  ): Promise<{ ended: Promise<void> }> => {
    const holder = w.db.createQueryRunner();
    await holder.connect();
    await holder.startTransaction();
    await holder.query(statement, params);
    const ended = new Promise<void>((done) =>
      setTimeout(() => {
        onEnd();
        void holder
          .commitTransaction()
          .then(() => holder.release())
          .then(done);
      }, ms),
    );
    return { ended };
  };
  /**
   * An hour-long partition `daysBack` days before the oldest one, holding one ended run. Each
   * test takes a range of its own: the summariser's ledger summarises a range once.
   */
  const expiredWithEndedRun = async (daysBack: number) => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const lowest = (await partitions.list())[0].from.getTime();
    const expired = {
      from: new Date(lowest - daysBack * 24 * HOUR),
      to: new Date(lowest - daysBack * 24 * HOUR + HOUR),
    };
    await partitions.maintenance((tx) => partitions.create(tx, expired));
    const endedRun = await w.insertRun(scheduleId, new Date(expired.from.getTime() + 60_000));
    await w.db.query(
      `UPDATE occurrences SET state = 'SUCCEEDED', finished_at = now() WHERE id = $1`,
      [endedRun],
    );
    return { scheduleId, expired, name: partitionName('occurrences', expired.from) };
  };

  it('creates the current window and the partitions ahead, each once under concurrent callers', async () => {
    const current = await currentWindow();
    const list = await partitions.list();
    const starts = list.map((p) => p.from.getTime());
    for (let i = 0; i <= 2; i++) expect(starts).toContain(current.getTime() + i * HOUR);
    // Drop the two newest (empty) ranges, then race two maintainers (and a third) for them.
    const newest = list.slice(-2);
    await partitions.maintenance(async (tx) => {
      for (const p of newest.reverse()) await dropNow(tx, p);
    });
    const results = await Promise.all([
      history.createAhead(),
      history.createAhead(),
      history.createAhead(),
    ]);
    const created = results.flatMap((r) => r.created.map((c) => c.from.getTime()));
    expect(created.sort()).toEqual(newest.map((p) => p.from.getTime()).sort());
    expect((await partitions.list()).length).toBe(list.length);
  });

  it('a second maintainer waits for the first however long it holds the maintenance lock', async () => {
    const newest = (await partitions.list()).slice(-1);
    await partitions.maintenance(async (tx) => {
      for (const p of newest) await dropNow(tx, p);
    });
    // Another maintainer's transaction (a relay on a busy machine) holds the maintenance lock
    // for 600 ms: longer than the 200 ms bound on the maintenance steps' own lock waits.
    const { ended: released } = await holdLocks(
      `SELECT pg_advisory_xact_lock(hashtextextended('dueline.history-partitions', 0))`,
      [],
      600,
    );
    const startedAt = Date.now();
    const { created } = await history.createAhead();
    const tookMs = Date.now() - startedAt;
    await released;
    expect(tookMs).toBeGreaterThanOrEqual(500); // it waited for the holder, and did not fail
    expect(created.map((r) => r.from.getTime())).toEqual([newest[0].from.getTime()]);
    expect((await partitions.list()).map((p) => p.name)).toContain(newest[0].name);
  });

  it('waits out a statement holding the parents longer than one bounded lock wait', async () => {
    const newest = (await partitions.list()).slice(-1);
    await partitions.maintenance(async (tx) => {
      for (const p of newest) await dropNow(tx, p);
    });
    // A hot-path transaction (the poller's batch waiting for its instant) holds occurrences for
    // 700 ms: more than one 200 ms lock wait, less than the tries together.
    const { ended: released } = await holdLocks(
      'LOCK TABLE ONLY occurrences IN ROW EXCLUSIVE MODE',
      [],
      700,
    );
    const startedAt = Date.now();
    const { created } = await history.createAhead();
    const tookMs = Date.now() - startedAt;
    await released;
    expect(created.map((r) => r.from.getTime())).toEqual([newest[0].from.getTime()]);
    expect(tookMs).toBeGreaterThanOrEqual(600); // it did wait for the holder
    expect((await partitions.list()).map((p) => p.name)).toContain(newest[0].name);
  });

  it('moves runs and attempts the DEFAULT partition holds into the partition created for them', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const newest = (await partitions.list()).at(-1)!;
    await partitions.maintenance((tx) => dropNow(tx, newest));
    // One run inside the range that is gone (a far-future run), one before every partition (a
    // backfill of an old instant): both land in DEFAULT.
    const future = new Date(newest.from.getTime() + 10 * 60_000);
    const old = new Date((await partitions.list())[0].from.getTime() - 3 * HOUR);
    const futureRun = await w.insertRun(scheduleId, future);
    const oldRun = await w.insertRun(scheduleId, old);
    await addAttempt(futureRun, future);
    await addAttempt(oldRun, old);
    expect(await partitionOf('occurrences', 'id = $1', [futureRun])).toBe('occurrences_default');

    const { created, moved } = await history.createAhead();
    expect(created.map((c) => c.from.getTime())).toContain(newest.from.getTime());
    expect(moved).toHaveLength(2);
    expect(await partitionOf('occurrences', 'id = $1', [futureRun])).toBe(newest.name);
    expect(await partitionOf('attempts', 'run_id = $1', [futureRun])).toBe(
      newest.name.replace('occurrences', 'attempts'),
    );
    expect(await partitionOf('occurrences', 'id = $1', [oldRun])).not.toBe('occurrences_default');
    expect(await partitionOf('attempts', 'run_id = $1', [oldRun])).not.toBe('attempts_default');
    const run = await w.run(futureRun);
    expect(run.state).toBe('QUEUED');
    expect(new Date(run.scheduledAt).getTime()).toBe(future.getTime());
    // Nothing of those ranges is left in DEFAULT.
    const [{ n }] = await w.db.query(`SELECT count(*)::int AS n FROM occurrences_default`);
    expect(n).toBe(0);
  });

  it('drops an expired partition of ended runs with its attempts, and keeps one with live runs', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const lowest = (await partitions.list())[0].from.getTime();
    // Two ranges 3 days back (the retention is 1 day): one with ended runs only, one with a
    // run waiting for its retry and a QUEUED one.
    const ended = {
      from: new Date(lowest - 3 * 24 * HOUR),
      to: new Date(lowest - 3 * 24 * HOUR + HOUR),
    };
    const live = { from: ended.to, to: new Date(ended.to.getTime() + HOUR) };
    await partitions.maintenance(async (tx) => {
      await partitions.create(tx, ended);
      await partitions.create(tx, live);
    });
    const at = (r: { from: Date }) => new Date(r.from.getTime() + 60_000);
    const endedRun = await w.insertRun(scheduleId, at(ended));
    await w.db.query(
      `UPDATE occurrences SET state = 'SUCCEEDED', finished_at = now() WHERE id = $1`,
      [endedRun],
    );
    await addAttempt(endedRun, at(ended));
    const retrying = await w.insertRun(scheduleId, at(live));
    await w.db.query(
      `UPDATE occurrences SET state = 'RETRY_WAIT', next_attempt_at = now() + interval '1 hour'
        WHERE id = $1`,
      [retrying],
    );
    await w.insertRun(scheduleId, new Date(at(live).getTime() + 1000));

    const summarised: Array<{ from: Date; to: Date; rows: number }> = [];
    const summariser = w.t.app.get<HistorySummariser>(HISTORY_SUMMARISER);
    const spy = jest
      .spyOn(summariser, 'summariseRange')
      .mockImplementation(async (tx, from, to) => {
        // Called in the dropping transaction, while the rows are still there.
        const [{ n }] = await sql.rows<{ n: number }>(
          `SELECT count(*)::int AS n FROM occurrences WHERE scheduled_at >= $1 AND scheduled_at < $2`,
          [from, to],
          tx,
        );
        summarised.push({ from, to, rows: n });
      });
    try {
      const { dropped, waiting } = await history.dropExpired();
      expect(dropped.map((p) => p.from.getTime())).toEqual([ended.from.getTime()]);
      expect(waiting.map((p) => p.from.getTime())).toEqual([live.from.getTime()]);
      expect(summarised).toEqual([{ from: ended.from, to: ended.to, rows: 1 }]);
    } finally {
      spy.mockRestore();
    }
    const endedName = `occurrences_p${ended.from.toISOString().slice(0, 10).replace(/-/g, '')}_${ended.from.toISOString().slice(11, 16).replace(':', '')}`;
    expect(await tableExists(endedName)).toBe(false);
    expect(await tableExists(endedName.replace('occurrences', 'attempts'))).toBe(false);
    expect((await w.db.query(`SELECT 1 FROM attempts WHERE run_id = $1`, [endedRun])).length).toBe(
      0,
    );
    expect(
      (await w.t.http.get('/runs/' + endedRun).set('Authorization', `Bearer ${w.tenant.apiKey}`))
        .status,
    ).toBe(404);
    expect((await w.run(retrying)).state).toBe('RETRY_WAIT');
    expect(await w.metric('dueline_history_partitions_waiting')).toBe(0);
    await history.maintain();
    expect(await w.metric('dueline_history_partitions_waiting')).toBe(1);
  });

  it('waits for a vacuum of the expired partition without holding up the hot path, then drops it', async () => {
    const { scheduleId, expired, name } = await expiredWithEndedRun(7);
    // A vacuum at work on the partition (the lock mode vacuum takes), for 800 ms: longer than
    // one bounded lock wait.
    const events: string[] = [];
    const { ended: vacuumEnds } = await holdLocks(
      `LOCK TABLE ONLY ${name} IN SHARE UPDATE EXCLUSIVE MODE`,
      [],
      800,
      () => events.push('vacuum ended'),
    );
    const dropping = history.dropExpired();
    // Meanwhile the hot path writes runs: maintenance waiting for the vacuum holds no lock they need.
    await new Promise((done) => setTimeout(done, 200));
    await w.insertRun(scheduleId, new Date(Date.now() + HOUR));
    events.push('run inserted');
    const { dropped } = await dropping;
    await vacuumEnds;
    expect(events).toEqual(['run inserted', 'vacuum ended']);
    expect(dropped.map((p) => p.from.getTime())).toContain(expired.from.getTime());
    expect(await tableExists(name)).toBe(false);
  });

  it('drops a partition without waiting for a schedule write in flight', async () => {
    const { scheduleId, expired, name } = await expiredWithEndedRun(9);
    // A transaction writing a schedule (a poller batch advancing its schedules while it waits
    // for its instant, a create, an edit), open for 700 ms. Runs carry no foreign key to
    // schedules or tenants (migration RunsWithoutParentKeys), so the drop needs neither table.
    const events: string[] = [];
    const { ended: writerEnds } = await holdLocks(
      `UPDATE schedules SET updated_at = updated_at WHERE id = $1`,
      [scheduleId],
      700,
      () => events.push('schedule write committed'),
    );
    const { dropped } = await history.dropExpired();
    events.push('partition dropped');
    await writerEnds;
    expect(events).toEqual(['partition dropped', 'schedule write committed']);
    expect(dropped.map((p) => p.from.getTime())).toContain(expired.from.getTime());
    expect(await tableExists(name)).toBe(false);
  });

  it('keeps one logical run per instant: the identity key refuses a duplicate in any partition', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const current = await currentWindow();
    for (const at of [
      new Date(current.getTime() + 5 * 60_000),
      new Date(Date.now() + 400 * 24 * HOUR),
    ]) {
      await w.insertRun(scheduleId, at);
      await expect(w.insertRun(scheduleId, at)).rejects.toThrow();
      const [{ n }] = await w.db.query(
        `SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1 AND scheduled_at = $2`,
        [scheduleId, at],
      );
      expect(n).toBe(1);
    }
  });

  it('claims in one partition, and a stale fencing token is still rejected', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const at = new Date((await dbNow()).getTime() - 1000);
    const runId = await w.insertRun(scheduleId, at, { publish: true });
    const engine = runEngine(w.t.app);
    const claim = await engine.claimBatch(
      [{ runId, tenantId: w.tenant.id, scheduledAt: at.toISOString() }],
      'worker-a',
    );
    expect(claim).toHaveLength(1);
    const { fencingToken } = claim[0];
    expect(await engine.heartbeat(w.tenant.id, runId, fencingToken - 1)).toEqual({ held: false });
    expect((await engine.heartbeat(w.tenant.id, runId, fencingToken)).held).toBe(true);

    // The claim statement's plan, with the run's instant, reads and updates the run (alias o)
    // in one partition. (Its budget subqueries count the tenant's live runs in every partition
    // through partial indexes: a permit may be held by a run of any instant.)
    const plan = await explainClaim(runId, at);
    const scanned = runScans(plan);
    expect(scanned.size).toBe(1);
    const unpruned = await explainClaim(runId, null);
    expect(runScans(unpruned).size).toBeGreaterThan(1);
  });

  it('keeps what a dropped partition held in the schedule summary (the real summariser)', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const lowest = (await partitions.list())[0].from.getTime();
    const range = {
      from: new Date(lowest - 5 * 24 * HOUR),
      to: new Date(lowest - 5 * 24 * HOUR + HOUR),
    };
    await partitions.maintenance((tx) => partitions.create(tx, range));
    const at = (minute: number) => new Date(range.from.getTime() + minute * 60_000);
    const ends: Array<[string, number]> = [
      ['SUCCEEDED', 1],
      ['SUCCEEDED', 2],
      ['FAILED', 3],
    ];
    for (const [state, minute] of ends) {
      const runId = await w.insertRun(scheduleId, at(minute));
      await w.db.query(
        `UPDATE occurrences SET state = $2, finished_at = scheduled_at + interval '2 seconds',
                attempt_count = 1 WHERE id = $1`,
        [runId, state],
      );
      await w.db.query(
        `INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token,
                               scheduled_at, started_at, ended_at, outcome)
         VALUES ($1, 1, $2, 'w', 1, $3, $3::timestamptz + make_interval(secs => $4::double precision / 1000),
                 $3::timestamptz + interval '2 seconds', $5)`,
        [runId, w.tenant.id, at(minute), minute * 100, state === 'FAILED' ? 'failed' : 'succeeded'],
      );
    }
    const day = range.from.toISOString().slice(0, 10);
    const nextDay = new Date(Date.parse(day) + 24 * HOUR).toISOString().slice(0, 10);
    const summary = async () => {
      const res = await w.t.http
        .get(`/schedules/${scheduleId}/summary`)
        .query({ from: day, to: nextDay })
        .set('Authorization', `Bearer ${w.tenant.apiKey}`);
      expect(res.status).toBe(200);
      return res.body.days.find((d: { day: string }) => d.day === day);
    };
    const before = await summary();
    expect(before).toMatchObject({ runs: 3, attempts: 3 });
    expect(before.lag).toMatchObject({ count: 3, maxMs: 300 });

    const { dropped } = await history.dropExpired();
    expect(dropped.map((p) => p.from.getTime())).toContain(range.from.getTime());
    expect(
      (
        await w.db.query(`SELECT count(*)::int AS n FROM occurrences WHERE schedule_id = $1`, [
          scheduleId,
        ])
      )[0].n,
    ).toBe(0);
    expect(await summary()).toEqual(before);
  });

  /** The partition that covers `at`, created (one hour) if none does. */
  const partitionCovering = async (at: Date): Promise<string> => {
    const found = (await partitions.list()).find((p) => p.from <= at && at < p.to);
    if (found) return found.name;
    const from = new Date(Math.floor(at.getTime() / HOUR) * HOUR);
    await partitions.maintenance((tx) =>
      partitions.create(tx, { from, to: new Date(from.getTime() + HOUR) }),
    );
    return partitionCovering(at);
  };
  /** The run's waiting queue jobs' data (what the worker would fetch). */
  const jobsOf = async (runId: string): Promise<Array<{ scheduledAt?: string }>> =>
    (
      await w.db.query(
        `SELECT data FROM pgboss.job
          WHERE name LIKE 'dueline-runs%' AND ${carriesRun('$1')} AND state IN ('created', 'retry')
          ORDER BY created_on`,
        [runId],
      )
    ).flatMap((r: { data: RunsJob }) => r.data.runs.filter((run) => run.runId === runId));
  const attemptRows = (runId: string) =>
    w.db.query(
      `SELECT attempt_no, fencing_token::int AS token, outcome, scheduled_at,
              tableoid::regclass::text AS p
         FROM attempts WHERE run_id = $1 ORDER BY attempt_no`,
      [runId],
    );
  /**
   * As the built-in worker claims a fetched job: in a batch (admitted runs), else alone (a retry,
   * a handed-over run). Null: not claimed.
   */
  const workerClaim = async (runId: string, scheduledAt: string | undefined, worker: string) => {
    const engine = runEngine(w.t.app);
    const [fast] = await engine.claimBatch([{ runId, tenantId: w.tenant.id, scheduledAt }], worker);
    if (fast) return fast;
    const result = await engine.claim(w.tenant.id, runId, worker, { requeue: true });
    return result.claimed ? result.claim : null;
  };
  /** A new partition appears while a run is in flight: the newest is dropped and made again. */
  const recreateNewestPartition = async (): Promise<void> => {
    const newest = (await partitions.list()).at(-1)!;
    await partitions.maintenance((tx) => dropNow(tx, newest));
    const { created } = await history.createAhead();
    expect(created.map((c) => c.from.getTime())).toContain(newest.from.getTime());
  };

  it("a retry across a partition boundary: its attempts stay in its run's partition, it completes once", async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    // Just before the boundary the database clock has passed: the run's partition is the
    // previous window's, its attempts happen in the current window's time.
    const boundary = await currentWindow();
    const at = new Date(boundary.getTime() - 1000);
    const runPartition = await partitionCovering(at);
    const nowPartition = await partitionCovering(await dbNow());
    expect(runPartition).not.toBe(nowPartition);
    const runId = await w.insertRun(scheduleId, at, { publish: true });
    const engine = runEngine(w.t.app);

    const [job] = await jobsOf(runId);
    expect(job.scheduledAt).toBe(at.toISOString());
    const [first] = await engine.claimBatch(
      [{ runId, tenantId: w.tenant.id, scheduledAt: job.scheduledAt }],
      'worker-a',
    );
    expect(first).toMatchObject({ attempt: 1 });
    expect(
      (await engine.heartbeat(w.tenant.id, runId, first.fencingToken, first.scheduledAt)).held,
    ).toBe(true);
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesRun('$1')}`, [runId]);
    const failed = await engine.complete(
      w.tenant.id,
      runId,
      first.fencingToken,
      { outcome: 'retryable', error: 'target responded 503', mayHaveActed: false },
      first.scheduledAt,
    );
    expect(failed).toMatchObject({ accepted: true, state: 'RETRY_WAIT' });

    // The next partition is created while the run waits for its retry.
    await recreateNewestPartition();

    const [retryJob] = await jobsOf(runId);
    expect(retryJob.scheduledAt).toBe(at.toISOString());
    await w.db.query(`UPDATE occurrences SET next_attempt_at = now() WHERE id = $1`, [runId]);
    const second = (await workerClaim(runId, retryJob.scheduledAt, 'worker-b'))!;
    expect(second).toMatchObject({ attempt: 2, fencingToken: first.fencingToken + 1 });
    // The first holder's late heartbeat and completion are fenced off, with the instant too.
    expect(
      await engine.heartbeat(w.tenant.id, runId, first.fencingToken, first.scheduledAt),
    ).toEqual({ held: false });
    const done = await engine.complete(
      w.tenant.id,
      runId,
      second.fencingToken,
      { outcome: 'succeeded', error: null, mayHaveActed: false },
      second.scheduledAt,
    );
    expect(done).toMatchObject({ accepted: true, state: 'SUCCEEDED' });
    // The retry job delivered again claims nothing.
    expect(await workerClaim(runId, retryJob.scheduledAt, 'worker-c')).toBeNull();

    const runs = await w.db.query(
      `SELECT id, state, attempt_count, tableoid::regclass::text AS p
         FROM occurrences WHERE schedule_id = $1`,
      [scheduleId],
    );
    expect(runs).toEqual([{ id: runId, state: 'SUCCEEDED', attempt_count: 2, p: runPartition }]);
    const attempts = await attemptRows(runId);
    expect(attempts.map((a: { attempt_no: number }) => a.attempt_no)).toEqual([1, 2]);
    expect(attempts.map((a: { token: number }) => a.token)).toEqual([
      first.fencingToken,
      second.fencingToken,
    ]);
    expect(attempts.map((a: { outcome: string }) => a.outcome)).toEqual(['retryable', 'succeeded']);
    for (const a of attempts) {
      expect(a.p).toBe(runPartition.replace('occurrences', 'attempts'));
      expect(new Date(a.scheduled_at).getTime()).toBe(at.getTime());
    }
  });

  it('a buffer_one hand-over across a partition boundary: the buffered run starts once, after the first ends', async () => {
    const scheduleId = await w.createSchedule(await w.createTarget(), {
      overlapPolicy: 'buffer_one',
    });
    const boundary = await currentWindow();
    const firstAt = new Date(boundary.getTime() - 1000);
    const nextAt = new Date(boundary.getTime() + 1000);
    const firstPartition = await partitionCovering(firstAt);
    const nextPartition = await partitionCovering(nextAt);
    expect(firstPartition).not.toBe(nextPartition);
    const engine = runEngine(w.t.app);
    const running = await w.insertRun(scheduleId, firstAt, { publish: true });
    const [held] = await engine.claimBatch(
      [{ runId: running, tenantId: w.tenant.id, scheduledAt: firstAt.toISOString() }],
      'worker-a',
    );
    expect(held).toBeDefined();

    // The run after the boundary, in the next partition, while the first is RUNNING.
    const buffered = await w.insertRun(scheduleId, nextAt, { publish: true });
    await w.db.query(`DELETE FROM pgboss.job WHERE ${carriesRun('$1')}`, [buffered]);
    expect(
      await engine.claimBatch(
        [{ runId: buffered, tenantId: w.tenant.id, scheduledAt: nextAt.toISOString() }],
        'worker-b',
      ),
    ).toHaveLength(0);
    expect(await engine.claim(w.tenant.id, buffered, 'worker-b', { requeue: true })).toMatchObject({
      claimed: false,
      reason: 'overlap',
      state: 'QUEUED',
    });
    expect(await w.run(buffered)).toMatchObject({
      state: 'QUEUED',
      reason: 'waiting_for_previous',
    });
    expect(await jobsOf(buffered)).toHaveLength(0);

    // A partition is created meanwhile; then the first run ends and hands its turn over.
    await recreateNewestPartition();
    const ended = await engine.complete(
      w.tenant.id,
      running,
      held.fencingToken,
      { outcome: 'succeeded', error: null, mayHaveActed: false },
      held.scheduledAt,
    );
    expect(ended).toMatchObject({ accepted: true, state: 'SUCCEEDED' });
    const jobs = await jobsOf(buffered);
    expect(jobs).toEqual([expect.objectContaining({ scheduledAt: nextAt.toISOString() })]);

    const claims = await Promise.all(
      ['worker-b', 'worker-c'].map((worker) => workerClaim(buffered, jobs[0].scheduledAt, worker)),
    );
    const started = claims.filter((c) => c !== null);
    expect(started).toHaveLength(1);
    const done = await engine.complete(
      w.tenant.id,
      buffered,
      started[0].fencingToken,
      { outcome: 'succeeded', error: null, mayHaveActed: false },
      started[0].scheduledAt,
    );
    expect(done).toMatchObject({ accepted: true, state: 'SUCCEEDED' });

    const runs = await w.db.query(
      `SELECT id, state, attempt_count, tableoid::regclass::text AS p
         FROM occurrences WHERE schedule_id = $1 ORDER BY scheduled_at`,
      [scheduleId],
    );
    expect(runs).toEqual([
      { id: running, state: 'SUCCEEDED', attempt_count: 1, p: firstPartition },
      { id: buffered, state: 'SUCCEEDED', attempt_count: 1, p: nextPartition },
    ]);
    for (const [runId, p] of [
      [running, firstPartition],
      [buffered, nextPartition],
    ]) {
      const attempts = await attemptRows(runId);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({
        outcome: 'succeeded',
        p: p.replace('occurrences', 'attempts'),
      });
    }
    // The buffered run started only after the first ended.
    const [{ ordered }] = await w.db.query(
      `SELECT (SELECT started_at FROM attempts WHERE run_id = $2)
                >= (SELECT finished_at FROM occurrences WHERE id = $1) AS ordered`,
      [running, buffered],
    );
    expect(ordered).toBe(true);
  });

  it("heartbeats and completions given the run's instant touch its partition only, in generic plans too", async () => {
    const scheduleId = await w.createSchedule(await w.createTarget());
    const at = new Date((await dbNow()).getTime() - 2000);
    const runId = await w.insertRun(scheduleId, at, { publish: true });
    const [claim] = await runEngine(w.t.app).claimBatch(
      [{ runId, tenantId: w.tenant.id, scheduledAt: at.toISOString() }],
      'worker-a',
    );
    const ids = [runId];
    const statements: Array<{
      name: string;
      sql: string;
      types: string[];
      params: (b: InstantBounds) => unknown[];
      table: 'occurrences' | 'attempts';
    }> = [
      {
        name: 'HEARTBEAT',
        sql: HEARTBEAT,
        types: ['uuid', 'uuid', 'bigint', 'int', 'timestamptz', 'timestamptz'],
        params: (b) => [runId, w.tenant.id, claim.fencingToken, 1000, ...b],
        table: 'occurrences',
      },
      {
        name: 'LOCK_SCHEDULES_OF_RUNS',
        sql: LOCK_SCHEDULES_OF_RUNS,
        types: ['uuid[]', 'timestamptz', 'timestamptz'],
        params: (b) => [ids, ...b],
        table: 'occurrences',
      },
      {
        name: 'LOCK_SCHEDULES_OF_CLAIMS',
        sql: LOCK_SCHEDULES_OF_CLAIMS,
        types: ['uuid[]', 'text[]', 'timestamptz', 'timestamptz'],
        params: (b) => [ids, CONCURRENT_POLICIES, ...b],
        table: 'occurrences',
      },
      {
        name: 'FINISH_UNDER_FENCE',
        sql: FINISH_UNDER_FENCE,
        types: ['uuid[]', 'uuid[]', 'bigint[]', 'text[]', 'text[]', 'text[]'].concat([
          'timestamptz',
          'timestamptz',
        ]),
        params: (b) => [
          ids,
          [w.tenant.id],
          [claim.fencingToken],
          ['SUCCEEDED'],
          [null],
          [null],
          ...b,
        ],
        table: 'occurrences',
      },
      {
        name: 'LOCK_HELD_RUNS',
        sql: LOCK_HELD_RUNS,
        types: ['uuid[]', 'uuid[]', 'bigint[]', 'timestamptz', 'timestamptz'],
        params: (b) => [ids, [w.tenant.id], [claim.fencingToken], ...b],
        table: 'occurrences',
      },
      {
        name: 'TRANSITION_UNDER_FENCE',
        sql: TRANSITION_UNDER_FENCE,
        types: ['uuid[]', 'bigint[]', 'text[]', 'text[]', 'text[]', 'int[]'].concat([
          'timestamptz',
          'timestamptz',
        ]),
        params: (b) => [ids, [claim.fencingToken], ['SUCCEEDED'], [null], [null], [null], ...b],
        table: 'occurrences',
      },
      {
        name: 'END_ATTEMPTS',
        sql: END_ATTEMPTS,
        types: [
          'uuid[]',
          'bigint[]',
          'text[]',
          'int[]',
          'int[]',
          'text[]',
          'jsonb[]',
          'text[]',
        ].concat(['text[]', 'timestamptz', 'timestamptz']),
        params: (b) => [
          ids,
          [claim.fencingToken],
          ['succeeded'],
          [200],
          [5],
          [null],
          [null],
          [null],
          [null],
          ...b,
        ],
        table: 'attempts',
      },
    ];
    // The claim's own statement, on a second run (its budget subqueries count live runs in every
    // partition through partial indexes: only the run's own scans, alias o, are counted).
    const toClaim = await w.insertRun(scheduleId, new Date(at.getTime() - 1000), { publish: true });
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      const claimPlan = (b: InstantBounds) =>
        explainPrepared(
          mode,
          CLAIM_RUNS,
          ['uuid[]', 'uuid[]', 'text', 'int', 'text[]', 'timestamptz', 'timestamptz'],
          [[toClaim], [w.tenant.id], 'explain', 1000, ['allow'], ...b],
        );
      expect({ mode, scanned: runScans(await claimPlan(instantBounds([at]))).size }).toEqual({
        mode,
        scanned: 1,
      });
      expect(runScans(await claimPlan(UNBOUNDED)).size).toBeGreaterThan(1);
      const admittedClaimPlan = (b: InstantBounds) =>
        explainPrepared(
          mode,
          CLAIM_ADMITTED_RUNS,
          ['uuid[]', 'uuid[]', 'text', 'int', 'text[]', 'timestamptz', 'timestamptz'],
          [[toClaim], [w.tenant.id], 'explain', 1000, ['allow'], ...b],
        );
      expect(runScans(await admittedClaimPlan(instantBounds([at]))).size).toBe(1);
      expect(runScans(await admittedClaimPlan(UNBOUNDED)).size).toBeGreaterThan(1);
    }
    for (const mode of ['force_custom_plan', 'force_generic_plan'] as const) {
      for (const s of statements) {
        const pruned = await explainPrepared(mode, s.sql, s.types, s.params(instantBounds([at])));
        expect({ statement: s.name, mode, scanned: [...scansOf(s.table, pruned)] }).toEqual({
          statement: s.name,
          mode,
          scanned: [
            await partitionOf(s.table, `${s.table === 'attempts' ? 'run_id' : 'id'} = $1`, [runId]),
          ],
        });
        const unpruned = await explainPrepared(mode, s.sql, s.types, s.params(UNBOUNDED));
        expect(scansOf(s.table, unpruned).size).toBeGreaterThan(1);
      }
    }
    // And the statements do their work with the instant: the run ends, once.
    const engine = runEngine(w.t.app);
    expect((await engine.heartbeat(w.tenant.id, runId, claim.fencingToken, at)).held).toBe(true);
    expect(
      await engine.complete(
        w.tenant.id,
        runId,
        claim.fencingToken,
        { outcome: 'succeeded', error: null, mayHaveActed: false },
        at,
      ),
    ).toMatchObject({ accepted: true, state: 'SUCCEEDED' });
    expect((await attemptRows(runId)).map((a: { outcome: string }) => a.outcome)).toEqual([
      'succeeded',
    ]);
  });

  /** The partitions of `table` a plan scans (pruned ones are not in it, or "Subplans Removed"). */
  const scansOf = (table: string, plan: string): Set<string> =>
    new Set(
      [...plan.matchAll(new RegExp(`Scan(?: using \\S+)? on (${table}_\\w+)`, 'g'))].map(
        (m) => m[1],
      ),
    );

  /** EXPLAIN of a prepared statement in the given plan cache mode (generic: how the ledger runs). */
  async function explainPrepared(
    mode: 'force_custom_plan' | 'force_generic_plan',
    sql: string,
    types: string[],
    params: unknown[],
  ): Promise<string> {
    const runner = w.db.createQueryRunner();
    const name = `explain_${randomUUID().replace(/-/g, '')}`;
    await runner.connect();
    try {
      await runner.query(`SET plan_cache_mode = ${mode}`);
      await runner.query(`PREPARE ${name}(${types.join(', ')}) AS ${sql}`);
      // EXECUTE takes no bind parameters: the values as literals (the PREPARE's types cast them).
      const literals: string[] = [];
      for (const value of params) {
        const [{ q }] = await runner.query('SELECT quote_nullable($1::text) AS q', [value]);
        literals.push(q);
      }
      const rows = await runner.query(`EXPLAIN EXECUTE ${name}(${literals.join(', ')})`);
      return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
    } finally {
      await runner.query(`DEALLOCATE ${name}`).catch(() => undefined);
      await runner.query('RESET plan_cache_mode');
      await runner.release();
    }
  }

  const runScans = (plan: string): Set<string> =>
    new Set([...plan.matchAll(/ on (occurrences_\w+) o(?:_\d+)?\b/g)].map((m) => m[1]));

  async function explainClaim(runId: string, at: Date | null): Promise<string> {
    const rows = await w.db.query(`EXPLAIN ${CLAIM_RUNS}`, [
      [runId],
      [w.tenant.id],
      `explain-${randomUUID()}`,
      1000,
      ['allow'],
      ...(at ? instantBounds([at]) : UNBOUNDED),
    ]);
    return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
  }
});
