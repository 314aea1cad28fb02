import { Client } from 'pg';
import { eventually } from '../support/eventually';
import { HttpSink } from '../support/http-sink';
import { Formation, type FormationNode } from './formation';
import { CreateLoad, ReadinessWatch } from './load';
import { ADMIN_TOKEN, Replica } from './replicas';

/**
 * The loss of the database primary under load, on a real pg_auto_failover formation (monitor,
 * primary, synchronous secondary on loopback ports) with two dueline replicas running every
 * role: steady creates of one-time schedules, every-second cron schedules, and a run fenced
 * before the failover. The primary is SIGKILLed (its postmaster with its keeper: the node is
 * gone, not restarted in place), then, in a fresh formation, SIGSTOPped (its network cut) and
 * resumed once the secondary was promoted. What the product promises is checked after each.
 */

jest.setTimeout(300_000);

interface Delivery {
  at: number;
  runId: string;
  scheduleId: string;
  scheduledAt: string;
}

/** Settings that make a replica notice a lost primary, and give its shards up, within seconds. */
const REPLICA_ENV = {
  DATABASE_CONNECT_TIMEOUT_MS: '1000',
  DATABASE_PRIMARY_CHECK_INTERVAL_MS: '500',
  REQUEST_TIMEOUT_MS: '5000',
  POLLER_LEASE_SECONDS: '3',
  EXECUTION_LEASE_MS: '10000',
  EXECUTION_HEARTBEAT_INTERVAL_MS: '2000',
  WORKER_COMPLETION_RETRIES: '12',
  MANAGEMENT_RATE_PER_SECOND: '200',
  MANAGEMENT_BURST: '400',
};

const progress = (line: string) => process.stdout.write(`failover test: ${line}\n`);

describe('losing the database primary under load', () => {
  let sink: HttpSink;
  const deliveries: Delivery[] = [];

  beforeAll(async () => {
    sink = await HttpSink.start();
    sink.behave((request) => {
      const body = request.body as Partial<Delivery> | null;
      if (body?.runId) {
        deliveries.push({
          at: Date.now(),
          runId: body.runId,
          scheduleId: body.scheduleId!,
          scheduledAt: body.scheduledAt!,
        });
      }
      return { status: 200, body: { ok: true } };
    });
  });
  afterAll(() => sink.close());

  it.each([
    ['SIGKILL' as const, 'killed'],
    ['SIGSTOP' as const, 'cut off (SIGSTOP) and back after the promotion'],
  ])('%s: primary %s', async (signal, _what) => {
    void _what;
    deliveries.length = 0;
    const started = Date.now();
    const formation = await Formation.create(progress);
    progress(`${signal}: formation ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const replicas: Replica[] = [];
    let load: CreateLoad | null = null;
    let readiness: ReadinessWatch | null = null;
    try {
      const databaseUrl = formation.databaseUrl();

      // A run fenced before the failover: claimed by an external worker whose lease then
      // expires and is swept. Done by a replica without a built-in worker, so the claim is ours.
      const setup = await Replica.start(
        'setup',
        {
          DATABASE_URL: databaseUrl,
          ROLES: 'api,relay',
          EXECUTION_LEASE_MS: '1000',
          EXECUTION_HEARTBEAT_INTERVAL_MS: '500',
        },
        formation.dir,
      );
      const api = apiOf(setup.url);
      const tenant = await api.admin('/tenants', {
        name: 'failover',
        quotas: { maxActiveSchedules: 100_000, maxConcurrentRuns: 500, dispatchRatePerSecond: 500 },
      });
      const key = tenant.body.apiKey as string;
      const target = await api.post(key, '/targets', {
        name: 'sink',
        url: sink.url(),
        deduplicates: true,
      });
      expect(target.status).toBe(201);
      const targetId = target.body.id as string;
      const parked = await api.post(key, '/schedules', {
        name: 'fenced',
        targetId,
        cron: '0 9 1 1 *',
        timezone: 'UTC',
      });
      const fencedRun = (await api.post(key, `/schedules/${parked.body.id}/trigger`)).body.id;
      const fenced = await api.post(key, `/runs/${fencedRun}/claim`, undefined, 'fenced-worker');
      expect(fenced.status).toBe(200);
      await eventually(
        async () =>
          expect((await api.get(key, `/runs/${fencedRun}`)).body.state).not.toBe('RUNNING'),
        { timeoutMs: 20_000, intervalMs: 200 },
      );
      await setup.stop();

      // Two replicas with every role, and the load.
      replicas.push(
        ...(await Promise.all(
          ['replica-a', 'replica-b'].map((name) =>
            Replica.start(name, { ...REPLICA_ENV, DATABASE_URL: databaseUrl }, formation.dir),
          ),
        )),
      );
      const [a, b] = replicas.map((r) => apiOf(r.url));
      const crons: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await (i % 2 ? b : a).post(key, '/schedules', {
          name: `every-second-${i}`,
          targetId,
          cron: '* * * * * *',
          timezone: 'UTC',
          overlapPolicy: 'allow',
          missedRunPolicy: 'all',
          maxCatchUp: 100,
        });
        expect(res.status).toBe(201);
        crons.push(res.body.id);
      }
      load = new CreateLoad(replicas, key, targetId);
      readiness = new ReadinessWatch(replicas[0]);
      const loadStarted = Date.now();
      await eventually(
        () => {
          const oneTime = deliveries.filter((d) => !crons.includes(d.scheduleId));
          if (oneTime.length < 10 || Date.now() - loadStarted < 6_000)
            throw new Error('warming up');
        },
        { timeoutMs: 60_000, intervalMs: 200 },
      );

      // The failure.
      const primary = (await formation.primary())!;
      const standby = formation.nodes.find((n) => n !== primary)!;
      expect(primary.name).toBe('node_1');
      const killedAt = Date.now();
      formation.signal(primary, signal);
      progress(`${signal}: ${primary.name} at ${new Date(killedAt).toISOString()}`);

      await formation.waitForStates({ [standby.name]: 'wait_primary' }, 120_000);
      const promotedAt = Date.now();
      const firstAfter = await eventually(
        () => {
          const d = deliveries.find((x) => Date.parse(x.scheduledAt) > killedAt);
          if (!d) throw new Error('no delivery of a run due after the failure yet');
          return d;
        },
        { timeoutMs: 120_000, intervalMs: 50 },
      );
      const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      progress(
        `${signal}: ${standby.name} promoted after ${seconds(promotedAt - killedAt)}; ` +
          `first post-failover delivery ${seconds(firstAfter.at - killedAt)} after the ${signal}`,
      );

      // WAL written on the new primary from here to the cutoff, per run (an input of the
      // scale-out plan in docs/scale-out.md; the creates of the window are counted beside it).
      const walStart = await walPosition(formation, standby);

      let oldPrimaryWrite: string | null = null;
      if (signal === 'SIGSTOP') {
        // The old primary comes back after the promotion: it must not take our writes.
        formation.signal(primary, 'SIGCONT');
        oldPrimaryWrite = await tryWrite(formation, primary);
        progress(`SIGSTOP: a write on the resumed old primary: ${oldPrimaryWrite}`);
        expect(oldPrimaryWrite).not.toBe('committed');
      }

      // Load goes on after the failover, then stops; everything due by then must be delivered.
      await eventually(
        () => {
          if (Date.now() - firstAfter.at < 8_000) throw new Error('load after the failover');
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      await load.stop();
      await readiness.stop();
      const cutoff = Date.now();
      // Both replicas rode the failover out: none crashed or restarted.
      for (const r of replicas.filter((replica) => replica.exitStatus() !== null)) {
        console.log(`${r.name} exited (${r.exitStatus()}); its log ends:\n${r.logTail()}`);
      }
      expect(replicas.map((r) => r.exitStatus())).toEqual([null, null]);

      const db = await formation.connect(standby.port);
      try {
        const { rows: wal } = await db.query<{ bytes: string; runs: number; creates: number }>(
          `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes,
                  (SELECT count(*)::int FROM occurrences
                    WHERE created_at BETWEEN $2 AND to_timestamp($3 / 1000.0)) AS runs,
                  (SELECT count(*)::int FROM schedules
                    WHERE created_at BETWEEN $2 AND to_timestamp($3 / 1000.0)) AS creates`,
          [walStart.lsn, walStart.at, cutoff],
        );
        progress(
          `${signal}: WAL on the new primary: ${wal[0].bytes} bytes for ${wal[0].runs} runs and ` +
            `${wal[0].creates} creates (${Math.round(Number(wal[0].bytes) / wal[0].runs)} bytes per run, creates included)`,
        );
        await checkPromises({
          db,
          load,
          readiness,
          deliveries,
          crons,
          killedAt,
          cutoff,
          fenced: { api: a, key, runId: fencedRun, fencingToken: fenced.body.fencingToken },
        }).catch((error: unknown) => {
          // What the replicas logged is what says why (a 500's cause is in its replica's log).
          for (const r of replicas) console.log(`${r.name}'s log ends:\n${r.logTail()}`);
          const odd = (load?.answers ?? []).filter((x) => x.problem !== undefined).slice(0, 5);
          if (odd.length > 0) console.log(`answers with a problem: ${JSON.stringify(odd)}`);
          throw error;
        });
        if (signal === 'SIGSTOP') {
          const { rows } = await db.query(`SELECT to_regclass('failover_probe') AS t`);
          expect(rows[0].t).toBeNull();
          // pg_auto_failover rewinds it and makes it the new secondary.
          await formation.waitForStates({ [primary.name]: 'secondary' }, 90_000);
        }
      } finally {
        await db.end();
      }
      const created = load.answers.filter((x) => x.status === 201).length;
      const unanswered = load.answers.filter((x) => x.status === 'no-answer');
      if (unanswered.length > 0) {
        progress(
          `${signal}: unanswered creates: ${JSON.stringify(unanswered.slice(0, 3).map((x) => ({ failure: x.failure, tookMs: x.tookMs, sentAfterKillMs: x.sentAt - killedAt })))}`,
        );
      }
      progress(
        `${signal}: kill -> promotion ${seconds(promotedAt - killedAt)}, kill -> first ` +
          `post-failover delivery ${seconds(firstAfter.at - killedAt)}; creates answered 201: ` +
          `${created}, 503: ${load.answers.filter((x) => x.status === 503).length}, no answer: ` +
          `${load.answers.filter((x) => x.status === 'no-answer').length}; runs delivered: ` +
          `${new Set(deliveries.map((d) => d.runId)).size}` +
          (oldPrimaryWrite ? `; old primary's write: ${oldPrimaryWrite}` : ''),
      );
    } finally {
      await load?.stop();
      await readiness?.stop();
      await Promise.all(replicas.map((r) => r.stop()));
      await formation.stop();
    }
  });
});

async function checkPromises(input: {
  db: Client;
  load: CreateLoad;
  readiness: ReadinessWatch;
  deliveries: Delivery[];
  crons: string[];
  killedAt: number;
  cutoff: number;
  fenced: { api: ReturnType<typeof apiOf>; key: string; runId: string; fencingToken: number };
}): Promise<void> {
  const { db, load, readiness, deliveries, crons, killedAt, cutoff, fenced } = input;

  // The API answered every create, within the request bound (REQUEST_TIMEOUT_MS plus the
  // machine's slack), with a 201 or a 503 problem with Retry-After: never a 500, never a hang.
  expect(load.answers.filter((x) => x.status === 'no-answer')).toEqual([]);
  expect(Math.max(...load.answers.map((x) => x.tookMs))).toBeLessThan(9_000);
  for (const answer of load.answers) {
    if (answer.status === 201) continue;
    // A create held through the failover until its runAt (1.5-3 s ahead) had passed is refused
    // for that, as any create of a past instant is; it must not have been answered sooner.
    if (answer.status === 400 && answer.sentAt + answer.tookMs >= Date.parse(answer.runAt)) {
      expect(answer.invalidFields).toEqual(['runAt']);
      continue;
    }
    expect({ status: answer.status, retryAfter: answer.retryAfter }).toEqual({
      status: 503,
      retryAfter: expect.stringMatching(/^\d+$/),
    });
    expect(answer.contentType).toMatch(/^application\/problem\+json/);
  }
  // Readiness said 503 while no primary was reachable, and 200 again after.
  const during = readiness.seen.filter((s) => s.at > killedAt);
  expect(during.some((s) => s.status === 503)).toBe(true);
  expect(during[during.length - 1].status).toBe(200);

  // Every schedule whose create was answered 201 exists on the new primary.
  const acknowledged = load.answers.filter((x) => x.status === 201).map((x) => x.scheduleId!);
  expect(acknowledged.length).toBeGreaterThan(20);
  const { rows: existing } = await db.query('SELECT id FROM schedules WHERE id = ANY($1)', [
    acknowledged,
  ]);
  expect(existing.length).toBe(acknowledged.length);

  // Every one-time schedule acknowledged and due by the cutoff has its run (the pollers may
  // still be catching up on the last second or two when the load stops: in time, not at once).
  const dueOneTime = load.answers
    .filter((x) => x.status === 201 && Date.parse(x.runAt) <= cutoff - 1000)
    .map((x) => x.scheduleId!);
  await eventually(
    async () => {
      const { rows: oneTimeRuns } = await db.query<{ n: number }>(
        `SELECT count(DISTINCT schedule_id)::int AS n FROM occurrences WHERE schedule_id = ANY($1)`,
        [dueOneTime],
      );
      expect(oneTimeRuns[0].n).toBe(dueOneTime.length);
    },
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  // Every run created (and not recorded as skipped) is delivered; the backlog is caught up.
  await eventually(
    async () => {
      const { rows } = await db.query<{ id: string }>(
        `SELECT id FROM occurrences
          WHERE scheduled_at <= to_timestamp($1 / 1000.0) AND state NOT IN ('SKIPPED', 'CANCELLED')`,
        [cutoff],
      );
      const delivered = new Set(deliveries.map((d) => d.runId));
      const missing = rows.filter((r) => !delivered.has(r.id));
      if (missing.length > 0)
        throw new Error(`${missing.length} of ${rows.length} runs undelivered`);
    },
    { timeoutMs: 90_000, intervalMs: 500 },
  );
  // Each every-second schedule has a row for every instant through the outage (catch-up).
  for (const id of crons) {
    const { rows } = await db.query<{ gaps: number }>(
      `SELECT count(*)::int AS gaps FROM (
         SELECT scheduled_at - lag(scheduled_at) OVER (ORDER BY scheduled_at) AS step
           FROM occurrences WHERE schedule_id = $1 AND scheduled_at <= to_timestamp($2 / 1000.0)
       ) s WHERE step > interval '1 second'`,
      [id, cutoff - 5000],
    );
    expect(rows[0].gaps).toBe(0);
  }

  // Nothing was dispatched that is not recorded: every run a target received is in the ledger
  // of the new primary, with the attempt that called it.
  const deliveredIds = [...new Set(deliveries.map((d) => d.runId))];
  const { rows: recorded } = await db.query<{ n: number }>(
    `SELECT count(DISTINCT o.id)::int AS n FROM occurrences o JOIN attempts a ON a.run_id = o.id
      WHERE o.id = ANY($1)`,
    [deliveredIds],
  );
  expect(recorded[0].n).toBe(deliveredIds.length);

  // No logical occurrence has two runs (in the ledger, and as the target saw it).
  const { rows: doubled } = await db.query(
    `SELECT schedule_id, revision, scheduled_at FROM occurrences
      GROUP BY 1, 2, 3 HAVING count(*) > 1`,
  );
  expect(doubled).toEqual([]);
  const runsPerInstant = new Map<string, Set<string>>();
  for (const d of deliveries) {
    const k = `${d.scheduleId}@${d.scheduledAt}`;
    runsPerInstant.set(k, (runsPerInstant.get(k) ?? new Set()).add(d.runId));
  }
  expect([...runsPerInstant.values()].filter((runs) => runs.size > 1)).toEqual([]);

  // Nothing was early: no target call before its instant.
  const early = deliveries.filter((d) => d.at < Date.parse(d.scheduledAt));
  expect(early).toEqual([]);

  // The worker fenced before the failover is still refused after it; the run is untouched.
  const before = (await fenced.api.get(fenced.key, `/runs/${fenced.runId}`)).body;
  const stale = await fenced.api.post(fenced.key, `/runs/${fenced.runId}/complete`, {
    fencingToken: fenced.fencingToken,
    outcome: 'succeeded',
  });
  expect(stale.status).toBe(409);
  const after = (await fenced.api.get(fenced.key, `/runs/${fenced.runId}`)).body;
  expect(after.fencingToken).toBeGreaterThan(fenced.fencingToken);
  expect({ state: after.state, fencingToken: after.fencingToken }).toEqual({
    state: before.state,
    fencingToken: before.fencingToken,
  });
}

async function walPosition(
  formation: Formation,
  node: FormationNode,
): Promise<{ lsn: string; at: Date }> {
  const client = await formation.connect(node.port);
  try {
    const { rows } = await client.query('SELECT pg_current_wal_lsn()::text AS lsn, now() AS at');
    return rows[0];
  } finally {
    await client.end();
  }
}

/**
 * A write straight to a node, bounded: 'committed', or why not (refused, read-only, or no
 * answer in time: a primary whose synchronous standby is gone cannot commit).
 */
async function tryWrite(formation: Formation, node: FormationNode): Promise<string> {
  const client = new Client({
    connectionString: formation.nodeUrl(node),
    connectionTimeoutMillis: 3000,
  });
  client.on('error', () => undefined);
  const attempt = (async () => {
    await client.connect();
    await client.query('CREATE TABLE IF NOT EXISTS failover_probe (note text)');
    await client.query(`INSERT INTO failover_probe VALUES ('written on the old primary')`);
    return 'committed';
  })().catch((error: Error) => `refused (${error.message})`);
  const bound = new Promise<string>((done) =>
    setTimeout(() => done('no commit within 5 s (waiting for a synchronous standby)'), 5000),
  );
  const outcome = await Promise.race([attempt, bound]);
  const socket = (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection
    ?.stream;
  socket?.destroy();
  return outcome;
}

function apiOf(base: string) {
  const call = async (
    method: string,
    path: string,
    auth: string,
    body?: unknown,
    workerId?: string,
  ) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${auth}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(method === 'POST' && path === '/schedules'
          ? { 'idempotency-key': crypto.randomUUID() }
          : {}),
        ...(workerId ? { 'x-worker-id': workerId } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(20_000),
    });
    return { status: res.status, body: (await res.json().catch(() => null)) as any };
  };
  return {
    admin: (path: string, body: unknown) => call('POST', path, ADMIN_TOKEN, body),
    post: (key: string, path: string, body?: unknown, workerId?: string) =>
      call('POST', path, key, body, workerId),
    get: (key: string, path: string) => call('GET', path, key),
  };
}
