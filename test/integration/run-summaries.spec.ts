import { randomUUID } from 'node:crypto';
import { SqlRunner } from '../../src/database';
import { RunSummariser } from '../../src/run-summaries';
import { ExecutionWorld, startExecutionWorld } from './execution.fixtures';

const DAY_MS = 86_400_000;
const DAY1 = Date.parse('2025-03-01T00:00:00Z');
const FROM = '2025-03-01';
const TO = '2025-03-04';

/** A deterministic spread of lags (ms), so percentiles are not all alike. */
function lagOf(i: number): number {
  return [0, 3, 7, 12, 20, 35, 60, 110, 240, 900, 4000][i % 11] + (i % 5);
}

interface FixtureRun {
  at: Date;
  state: string;
  reason: string | null;
  /** Attempts to append; the first starts `lagMs` after the run's fires_at. */
  attempts: number;
  lagMs: number;
  trigger?: 'schedule' | 'replay';
}

/**
 * Summaries equal the rows they replace: runs in several states and reasons with their
 * attempts over three days are read through GET /schedules/{id}/summary, then summarised and
 * deleted as the partition drop does (in one transaction), and the answer is read again.
 */
describe('run summaries', () => {
  let w: ExecutionWorld;
  let sql: SqlRunner;
  let summariser: RunSummariser;
  let scheduleId: string;

  const summary = (query: string, apiKey?: string) =>
    w.auth(w.t.http.get(`/schedules/${scheduleId}/summary${query}`), apiKey);

  async function insertRuns(runs: FixtureRun[]): Promise<void> {
    for (const run of runs) {
      const id = randomUUID();
      const final = !['QUEUED', 'RUNNING', 'RETRY_WAIT'].includes(run.state);
      await sql.rows(
        `INSERT INTO occurrences
           (id, tenant_id, schedule_id, revision, scheduled_at, scheduled_local, state, reason,
            trigger, origin_key, attempt_count, max_attempts, fires_at, retry_deadline,
            fencing_token, finished_at)
         VALUES ($1, $2, $3, 1, $4, $5, $6, $7, $8, $9, $10::int, 3, $4, $4::timestamptz + interval '1 hour',
                 $10::int, CASE WHEN $11 THEN $4::timestamptz + interval '1 minute' END)`,
        [
          id,
          w.tenant.id,
          scheduleId,
          run.at,
          run.at.toISOString(),
          run.state,
          run.reason,
          run.trigger ?? 'schedule',
          run.trigger === 'replay' ? randomUUID() : '',
          run.attempts,
          final,
        ],
      );
      for (let n = 1; n <= run.attempts; n++) {
        await sql.rows(
          `INSERT INTO attempts (run_id, attempt_no, tenant_id, worker_id, fencing_token, started_at,
                                 ended_at, outcome, scheduled_at)
           VALUES ($1, $2::int, $3, 'w', $2::int, $4::timestamptz + make_interval(secs => $5 / 1000.0),
                   $4::timestamptz + make_interval(secs => $5 / 1000.0 + 1), 'failed', $4)`,
          [id, n, w.tenant.id, run.at, run.lagMs + (n - 1) * 5000],
        );
      }
    }
  }

  /** The simulated partition drop: summarise [from, to) and delete its final runs, together. */
  async function dropRange(from: Date, to: Date): Promise<void> {
    await sql.transaction(async (tx) => {
      await summariser.summariseRange(tx, from, to);
      await sql.rows(
        `DELETE FROM occurrences
          WHERE scheduled_at >= $1 AND scheduled_at < $2
            AND state NOT IN ('QUEUED', 'RUNNING', 'RETRY_WAIT')`,
        [from, to],
        tx,
      );
    });
  }

  beforeAll(async () => {
    w = await startExecutionWorld('api');
    sql = w.t.app.get(SqlRunner);
    summariser = w.t.app.get(RunSummariser);
    const targetId = await w.createTarget();
    scheduleId = await w.createSchedule(targetId);
    const runs: FixtureRun[] = [];
    for (let day = 0; day < 3; day++) {
      for (let i = 0; i < 40; i++) {
        const at = new Date(DAY1 + day * DAY_MS + i * 30 * 60_000);
        const kind = (i + day) % 8;
        const lagMs = lagOf(i * 7 + day);
        if (kind <= 3) runs.push({ at, state: 'SUCCEEDED', reason: null, attempts: 1, lagMs });
        else if (kind === 4)
          runs.push({ at, state: 'SUCCEEDED', reason: null, attempts: 2, lagMs });
        else if (kind === 5)
          runs.push({ at, state: 'FAILED', reason: 'attempts_exhausted', attempts: 3, lagMs });
        else if (kind === 6)
          runs.push({ at, state: 'SKIPPED', reason: 'overlap', attempts: 0, lagMs });
        else runs.push({ at, state: 'UNKNOWN', reason: 'lease_expired', attempts: 1, lagMs });
      }
      // A replay is late on purpose: counted, but its lag is not the schedule's.
      runs.push({
        at: new Date(DAY1 + day * DAY_MS + 5 * 60_000),
        state: 'SUCCEEDED',
        reason: null,
        attempts: 1,
        lagMs: 3 * DAY_MS,
        trigger: 'replay',
      });
    }
    // Still active on day 2, inside the second range: never summarised, always counted.
    runs.push({
      at: new Date(DAY1 + DAY_MS + 20 * 3_600_000 + 60_000),
      state: 'RETRY_WAIT',
      reason: 'retryable_failure',
      attempts: 1,
      lagMs: 15,
    });
    await insertRuns(runs);
  });
  afterAll(() => w.close());

  it('equal the rows they replace: counts always, percentiles exactly for single-slice days', async () => {
    const before = await summary(`?from=${FROM}&to=${TO}`);
    expect(before.status).toBe(200);
    expect(before.body.days.map((d: { day: string }) => d.day)).toEqual([
      '2025-03-01',
      '2025-03-02',
      '2025-03-03',
    ]);
    expect(before.body.days[0].runs).toBe(41);
    expect(before.body.days[1].runs).toBe(42);

    // Day 1 in one slice; day 2 in two slices (the second holding the active run); day 3 kept.
    await dropRange(new Date(DAY1), new Date(DAY1 + DAY_MS));
    await dropRange(new Date(DAY1 + DAY_MS), new Date(DAY1 + DAY_MS + 12 * 3_600_000));
    await dropRange(new Date(DAY1 + DAY_MS + 12 * 3_600_000), new Date(DAY1 + 2 * DAY_MS));
    const [{ left }] = await sql.rows<{ left: number }>(
      `SELECT count(*)::int AS left FROM occurrences
        WHERE schedule_id = $1 AND scheduled_at < $2`,
      [scheduleId, new Date(DAY1 + 2 * DAY_MS)],
    );
    expect(left).toBe(1);

    const after = await summary(`?from=${FROM}&to=${TO}`);
    expect(after.status).toBe(200);
    const counts = (days: any[]) =>
      days.map((d) => ({
        day: d.day,
        runs: d.runs,
        attempts: d.attempts,
        lagCount: d.lag.count,
        lagMax: d.lag.maxMs,
        outcomes: d.outcomes.map((o: any) => ({
          state: o.state,
          reason: o.reason,
          runs: o.runs,
          attempts: o.attempts,
          lagCount: o.lag.count,
          lagMax: o.lag.maxMs,
        })),
      }));
    expect(counts(after.body.days)).toEqual(counts(before.body.days));
    // Single-slice days (day 1 summarised whole, day 3 still rows): identical to the ms.
    expect(after.body.days[0]).toEqual(before.body.days[0]);
    expect(after.body.days[2]).toEqual(before.body.days[2]);
    expect(after.body.days[0].outcomes.some((o: any) => o.lag.exact && o.lag.count > 1)).toBe(true);
    // Day 2 came in two slices: percentiles from the merged histogram, within its precision.
    const succeeded = (days: any[]) =>
      days[1].outcomes.find((o: any) => o.state === 'SUCCEEDED' && o.reason === null).lag;
    const [was, now] = [succeeded(before.body.days), succeeded(after.body.days)];
    expect(now.exact).toBe(false);
    for (const p of ['p50Ms', 'p99Ms'] as const) {
      expect(Math.abs(now[p] - was[p])).toBeLessThanOrEqual(Math.max(1, was[p] * 0.05));
    }
  });

  it('count a range once: the same range again writes nothing, an overlapping one is refused', async () => {
    const range = [new Date(DAY1), new Date(DAY1 + DAY_MS)] as const;
    const rows = async () =>
      (await sql.rows<{ n: number }>(`SELECT count(*)::int AS n FROM run_summaries`))[0].n;
    const written = await rows();
    await sql.transaction((tx) => summariser.summariseRange(tx, ...range));
    expect(await rows()).toBe(written);
    await expect(
      sql.transaction((tx) =>
        summariser.summariseRange(tx, new Date(DAY1 + 3_600_000), new Date(DAY1 + DAY_MS + 1)),
      ),
    ).rejects.toThrow(/run_summary_ranges_no_overlap/);
    expect(await rows()).toBe(written);
  });

  it('are tenant-scoped and bounded: 404 for another tenant, 400 for a bad or too long range', async () => {
    const other = await w.t.createTenant('other');
    expect((await summary(`?from=${FROM}&to=${TO}`, other.apiKey)).status).toBe(404);
    for (const query of [
      `?from=${TO}&to=${FROM}`,
      '?from=2024-01-01&to=2025-03-01',
      '?from=yesterday',
    ]) {
      const res = await summary(query);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    }
    const week = await summary('');
    expect(week.status).toBe(200);
    expect(week.body.days).toHaveLength(7);
  });

  it('take historyRetentionDays as a tenant quota (default 7, 1 to 400) shown in usage', async () => {
    const admin = (req: any) => req.set('Authorization', 'Bearer test-admin-token-0123456789');
    const created = await w.t.createTenant('kept');
    const read = await admin(w.t.http.get(`/tenants/${created.id}`));
    expect(read.body.quotas.historyRetentionDays).toBe(7);
    const patched = await admin(w.t.http.patch(`/tenants/${created.id}`)).send({
      quotas: { historyRetentionDays: 30 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.quotas.historyRetentionDays).toBe(30);
    const usage = await w.auth(w.t.http.get('/usage'), created.apiKey);
    expect(usage.body.quotas.historyRetentionDays).toBe(30);
    for (const historyRetentionDays of [0, 401]) {
      const refused = await admin(w.t.http.patch(`/tenants/${created.id}`)).send({
        quotas: { historyRetentionDays },
      });
      expect(refused.status).toBe(400);
    }
  });
});
