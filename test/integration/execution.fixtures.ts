import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { DataSource } from 'typeorm';
import type { INestApplication } from '@nestjs/common';
import { AdmissionService } from '../../src/admission';
import { SqlRunner } from '../../src/database';
import { ExecutionService } from '../../src/execution';
import { OccurrencesService, type NewOccurrence } from '../../src/occurrences';
import { HttpSink } from '../support/http-sink';
import { startTestApp, TestApp } from '../support/test-app';
import { carriesRun } from '../support/run-jobs';

/**
 * Execution tests share this setup: an app with the given roles on its own database, short
 * leases, a local HTTP target, and one tenant with helpers that build consistent records.
 */
export interface ExecutionWorld {
  t: TestApp;
  db: DataSource;
  sink: HttpSink;
  tenant: { id: string; apiKey: string };
  auth(req: Test, apiKey?: string): Test;
  createTarget(options?: {
    deduplicates?: boolean;
    signingSecret?: string;
    timeoutMs?: number;
    apiKey?: string;
  }): Promise<string>;
  createSchedule(
    targetId: string,
    body?: Record<string, unknown>,
    apiKey?: string,
  ): Promise<string>;
  /** POST /schedules/{id}/trigger: a QUEUED run due now, with its job. */
  trigger(scheduleId: string, apiKey?: string): Promise<string>;
  /**
   * A QUEUED run at `scheduledAt`, inserted as the ledger does. With `publish` it goes through
   * admission as the poller's runs do (admitted with its job if its tenant can afford it, else
   * waiting); without, it is neither admitted nor published (a claim must admit it).
   */
  insertRun(
    scheduleId: string,
    scheduledAt: Date,
    options?: { publish?: boolean },
  ): Promise<string>;
  /** GET /runs/{id} */
  run(runId: string): Promise<any>;
  /** A counter's value in /metrics (0 when absent). */
  metric(name: string, labels?: string): Promise<number>;
  close(): Promise<void>;
}

export const FAST_RETRIES = {
  maxAttempts: 3,
  initialDelayMs: 100,
  maxDelayMs: 200,
  retryDeadlineSeconds: 120,
};

/** Short leases and fast loops, so failure cases play out in a test's time. */
export const FAST_EXECUTION: Record<string, string> = {
  EXECUTION_LEASE_MS: '3000',
  EXECUTION_HEARTBEAT_INTERVAL_MS: '200',
  EXECUTION_THROTTLED_RETRY_MS: '100',
  RELAY_SWEEP_INTERVAL_MS: '100',
  WORKER_COMPLETION_RETRY_BASE_MS: '100',
};

/** The claim (admission) and the held run (execution) as one object, as the worker uses them. */
export function runEngine(app: INestApplication) {
  const admission = app.get(AdmissionService);
  const execution = app.get(ExecutionService);
  return {
    claim: admission.claim.bind(admission),
    claimBatch: admission.claimBatch.bind(admission),
    heartbeat: execution.heartbeat.bind(execution),
    complete: execution.complete.bind(execution),
    completeMany: execution.completeMany.bind(execution),
    sweepExpiredLeases: execution.sweepExpiredLeases.bind(execution),
  };
}
export type RunEngine = ReturnType<typeof runEngine>;

export async function startExecutionWorld(
  roles: string,
  env: Record<string, string> = {},
  quotas: Record<string, number> = {},
): Promise<ExecutionWorld> {
  const sink = await HttpSink.start();
  const t = await startTestApp({
    ROLES: roles,
    TARGET_ALLOWED_HOSTS: '127.0.0.1',
    // Tests poll runs through the API far faster than a client would.
    MANAGEMENT_RATE_PER_SECOND: '100000',
    MANAGEMENT_BURST: '100000',
    ...FAST_EXECUTION,
    ...env,
  });
  const db = t.app.get(DataSource);
  const tenant = await t.createTenant(`tenant-${randomUUID().slice(0, 8)}`, {
    maxActiveSchedules: 10_000,
    ...quotas,
  });
  const auth = (req: Test, apiKey = tenant.apiKey) => req.set('Authorization', `Bearer ${apiKey}`);

  const world: ExecutionWorld = {
    t,
    db,
    sink,
    tenant,
    auth,
    async createTarget(options = {}) {
      const res = await auth(t.http.post('/targets'), options.apiKey).send({
        name: `target-${randomUUID()}`,
        url: sink.url(),
        deduplicates: options.deduplicates ?? false,
        timeoutMs: options.timeoutMs ?? 5000,
        ...(options.signingSecret ? { signingSecret: options.signingSecret } : {}),
      });
      if (res.status !== 201) throw new Error(`target: ${res.status} ${res.text}`);
      return res.body.id;
    },
    async createSchedule(targetId, body = {}, apiKey) {
      const res = await auth(t.http.post('/schedules'), apiKey)
        .set('Idempotency-Key', randomUUID())
        .send({
          name: `s-${randomUUID().slice(0, 8)}`,
          targetId,
          // Far away: these tests make their runs themselves (trigger or ledger).
          runAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
          overlapPolicy: 'allow',
          retryPolicy: FAST_RETRIES,
          ...body,
        });
      if (res.status !== 201) throw new Error(`schedule: ${res.status} ${res.text}`);
      return res.body.id;
    },
    async trigger(scheduleId, apiKey) {
      const res = await auth(t.http.post(`/schedules/${scheduleId}/trigger`), apiKey);
      if (res.status !== 201) throw new Error(`trigger: ${res.status} ${res.text}`);
      return res.body.id;
    },
    async insertRun(scheduleId, scheduledAt, options = {}) {
      const sql = t.app.get(SqlRunner);
      return sql.transaction(async (tx) => {
        const [schedule] = await sql.rows<{
          tenant_id: string;
          revision: number;
          retry_max_attempts: number;
        }>(
          'SELECT tenant_id, revision, retry_max_attempts FROM schedules WHERE id = $1',
          [scheduleId],
          tx,
        );
        const run: NewOccurrence = {
          tenantId: schedule.tenant_id,
          scheduleId,
          revision: schedule.revision,
          scheduledAt,
          scheduledLocal: scheduledAt.toISOString(),
          state: 'QUEUED',
          reason: null,
          trigger: 'schedule',
          maxAttempts: schedule.retry_max_attempts,
          retryDeadlineSeconds: FAST_RETRIES.retryDeadlineSeconds,
          priority: 'normal',
          startDeadlineSeconds: null,
        };
        // With `publish`, through admission as the poller's runs go.
        const admission = t.app.get(AdmissionService);
        if (options.publish) await admission.decideNew(tx, [run]);
        const [inserted] = await t.app.get(OccurrencesService).insert(tx, [run]);
        if (run.admitted) {
          await admission.admitted(tx, [
            { runId: inserted.id, tenantId: schedule.tenant_id, scheduledAt: inserted.scheduledAt },
          ]);
        }
        return inserted.id;
      });
    },
    async run(runId) {
      const res = await auth(t.http.get(`/runs/${runId}`));
      if (res.status !== 200) throw new Error(`run: ${res.status} ${res.text}`);
      return res.body;
    },
    async metric(name, labels = '') {
      const text = (await t.http.get('/metrics')).text;
      const escaped = `${name}${labels}`.replace(/[{}"=,]/g, (c) => `\\${c}`);
      const match = new RegExp(`^${escaped} (\\S+)$`, 'm').exec(text);
      return match ? Number(match[1]) : 0;
    },
    async close() {
      await t.close();
      await sink.close();
    },
  };
  return world;
}

/** Queue jobs of a run that are waiting to be fetched, with when they become fetchable. */
export async function pendingJobs(
  db: DataSource,
  runId: string,
): Promise<Array<{ start_after: Date }>> {
  return db.query(
    `SELECT start_after FROM pgboss.job
      WHERE name = 'dueline-runs' AND ${carriesRun('$1')} AND state IN ('created', 'retry')
      ORDER BY start_after`,
    [runId],
  );
}

/**
 * A journal of every job inserted into pg-boss's job table (run id, queue), for tests that count
 * the jobs a run ever had: a claimed run's job is deleted at once (queue retention).
 */
export async function installJobJournal(w: ExecutionWorld): Promise<void> {
  await w.db.query(`CREATE TABLE test_job_journal (run_id text NOT NULL, queue text NOT NULL)`);
  await w.db.query(
    `CREATE FUNCTION test_journal_job() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       INSERT INTO test_job_journal
         SELECT carried.run->>'runId', NEW.name
           FROM jsonb_array_elements(NEW.data->'runs') AS carried(run);
       RETURN NULL;
     END $$`,
  );
  await w.db.query(
    `CREATE TRIGGER test_journal_job AFTER INSERT ON pgboss.job
       FOR EACH ROW EXECUTE FUNCTION test_journal_job()`,
  );
}
