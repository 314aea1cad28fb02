import { randomUUID } from 'node:crypto';
import type { Test } from 'supertest';
import { Webhook } from 'standardwebhooks';
import { SqlRunner } from '../../src/database';
import { OccurrencesService, type NewOccurrence } from '../../src/occurrences';
import {
  ExecutionWorld,
  FAST_RETRIES,
  startExecutionWorld,
} from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';
import { gate, HttpSink, type SinkRequest } from '../support/http-sink';

const secretOf = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString('base64')}`;
const PAYLOAD_MARKER = 'payload-never-in-an-event';

/**
 * Event subscriptions end to end: the api, worker (runs and the event lane) and relay roles on
 * one database; runs call one local sink, events go to another (the tenant's subscriber),
 * verified as a receiver would with the `standardwebhooks` package.
 */
describe('event subscriptions', () => {
  let w: ExecutionWorld;
  let subscriber: HttpSink;

  /** A tenant of its own per test, so one test's events are never another's. */
  async function tenantWorld() {
    const tenant = await w.t.createTenant(`events-${randomUUID().slice(0, 8)}`, {
      maxActiveSchedules: 1000,
    });
    const auth = (req: Test) => req.set('Authorization', `Bearer ${tenant.apiKey}`);
    const path = `/events-${randomUUID().slice(0, 8)}`;
    const secret = secretOf(7);
    const target = async (url: string, extra: object = {}): Promise<string> => {
      const res = await auth(w.t.http.post('/targets')).send({
        name: `t-${randomUUID()}`,
        url,
        deduplicates: false,
        timeoutMs: 5000,
        ...extra,
      });
      if (res.status !== 201) throw new Error(`target: ${res.status} ${res.text}`);
      return res.body.id;
    };
    const hook = await target(subscriber.url(path), { signingSecret: secret });
    const schedule = async (targetId: string, body: object = {}): Promise<string> => {
      const res = await auth(w.t.http.post('/schedules'))
        .set('Idempotency-Key', randomUUID())
        .send({
          name: `s-${randomUUID().slice(0, 8)}`,
          targetId,
          runAt: new Date(Date.now() + 24 * 3600_000).toISOString(),
          overlapPolicy: 'allow',
          retryPolicy: FAST_RETRIES,
          payload: { marker: PAYLOAD_MARKER },
          ...body,
        });
      if (res.status !== 201) throw new Error(`schedule: ${res.status} ${res.text}`);
      return res.body.id;
    };
    const trigger = async (scheduleId: string): Promise<string> => {
      const res = await auth(w.t.http.post(`/schedules/${scheduleId}/trigger`));
      if (res.status !== 201) throw new Error(`trigger: ${res.status} ${res.text}`);
      return res.body.id;
    };
    const run = async (runId: string) => (await auth(w.t.http.get(`/runs/${runId}`))).body;
    const subscribe = async (eventTypes: string[], targetId = hook) => {
      const res = await auth(w.t.http.post('/subscriptions')).send({ targetId, eventTypes });
      if (res.status !== 201) throw new Error(`subscription: ${res.status} ${res.text}`);
      return res.body.id as string;
    };
    /** The events this tenant's subscriber received, verified, in arrival order. */
    const received = (type?: string): SinkRequest[] =>
      subscriber.requests
        .filter((r) => r.path === path && r.headers['webhook-id'] !== undefined)
        .filter((r) => type === undefined || r.body?.type === type);
    return {
      tenant,
      auth,
      path,
      secret,
      hook,
      target,
      schedule,
      trigger,
      run,
      subscribe,
      received,
    };
  }

  const verified = (secret: string, req: SinkRequest) => {
    new Webhook(secret).verify(req.raw, req.headers as Record<string, string>);
    return req.body;
  };

  /** A row as the poller writes a skipped instant, through the ledger's one insert. */
  async function insertSkipped(scheduleId: string, scheduledAt: Date): Promise<string> {
    const sql = w.t.app.get(SqlRunner);
    return sql.transaction(async (tx) => {
      const [s] = await sql.rows<{ tenant_id: string; revision: number }>(
        'SELECT tenant_id, revision FROM schedules WHERE id = $1',
        [scheduleId],
        tx,
      );
      const row: NewOccurrence = {
        tenantId: s.tenant_id,
        scheduleId,
        revision: s.revision,
        scheduledAt,
        scheduledLocal: scheduledAt.toISOString(),
        state: 'SKIPPED',
        reason: 'overlap',
        trigger: 'schedule',
        maxAttempts: 1,
        retryDeadlineSeconds: 60,
        priority: 'normal',
        startDeadlineSeconds: null,
      };
      const [inserted] = await w.t.app.get(OccurrencesService).insert(tx, [row]);
      return inserted.id;
    });
  }

  beforeAll(async () => {
    subscriber = await HttpSink.start();
    w = await startExecutionWorld('api,worker,relay', {
      EVENT_DELIVERY_INTERVAL_MS: '50',
      EVENT_DELIVERY_TIMEOUT_MS: '800',
      EVENT_RETRY_INITIAL_DELAY_MS: '50',
      EVENT_RETRY_MAX_DELAY_MS: '200',
      EVENT_DELIVERY_MAX_ATTEMPTS: '4',
      RELAY_AUTO_PAUSE_INTERVAL_MS: '100',
    });
    // Runs: /ok answers 200, /fail 400, /gone 410, /drop reads the request and hangs up.
    w.sink.behave((req) => {
      if (req.path.startsWith('/fail')) return { status: 400 };
      if (req.path.startsWith('/gone')) return { status: 410 };
      if (req.path.startsWith('/drop')) return { destroy: true };
      return { status: 200 };
    });
  });
  afterEach(() => subscriber.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(async () => {
    await w.close();
    await subscriber.close();
  });

  it('sends each subscribed type, signed, with its data and never the payload; nothing for types not subscribed', async () => {
    const t = await tenantWorld();
    await t.subscribe([
      'run.failed',
      'run.unknown',
      'occurrence.skipped',
      'schedule.paused',
      'target.disabled',
    ]);
    const ok = await t.schedule(await t.target(w.sink.url('/ok')));
    const failing = await t.schedule(await t.target(w.sink.url('/fail')));
    const dropping = await t.schedule(await t.target(w.sink.url('/drop')));
    const goneTarget = await t.target(w.sink.url('/gone'));
    const gone = await t.schedule(goneTarget);

    const succeeded = await t.trigger(ok);
    const failed = await t.trigger(failing);
    const unknown = await t.trigger(dropping);
    const goneRun = await t.trigger(gone);
    const skipped = await insertSkipped(ok, new Date(Date.UTC(2026, 0, 1)));
    await eventually(async () => {
      expect((await t.run(succeeded)).state).toBe('SUCCEEDED');
      expect((await t.run(failed)).state).toBe('FAILED');
      expect((await t.run(unknown)).state).toBe('UNKNOWN');
      expect((await t.run(goneRun)).state).toBe('FAILED');
    });
    const paused = await t
      .auth(w.t.http.patch(`/schedules/${ok}`))
      .set('If-Match', '"1"')
      .send({ status: 'paused' });
    expect(paused.status).toBe(200);

    await eventually(() => {
      expect(t.received('run.failed')).toHaveLength(2);
      expect(t.received('run.unknown')).toHaveLength(1);
      expect(t.received('occurrence.skipped')).toHaveLength(1);
      expect(t.received('schedule.paused')).toHaveLength(1);
      expect(t.received('target.disabled')).toHaveLength(1);
    });
    for (const req of t.received()) {
      const body = verified(t.secret, req);
      expect(req.headers['idempotency-key']).toBe(req.headers['webhook-id']);
      expect(req.headers['x-dueline-run-id']).toBeUndefined();
      expect(Date.parse(body.timestamp)).not.toBeNaN();
      expect(req.raw).not.toContain(PAYLOAD_MARKER);
      expect(() => new Webhook(secretOf(8)).verify(req.raw, req.headers as never)).toThrow();
    }
    const byRun = (type: string, runId: string) =>
      t.received(type).find((r) => r.body.data.runId === runId)?.body;
    expect(byRun('run.failed', failed)).toMatchObject({
      type: 'run.failed',
      data: { runId: failed, scheduleId: failing, state: 'FAILED', attemptCount: 1 },
    });
    expect(byRun('run.failed', goneRun).data).toMatchObject({ reason: 'target_gone' });
    expect(byRun('run.unknown', unknown).data).toMatchObject({ state: 'UNKNOWN' });
    expect(byRun('occurrence.skipped', skipped).data).toMatchObject({
      state: 'SKIPPED',
      reason: 'overlap',
      scheduledAt: '2026-01-01T00:00:00.000Z',
    });
    expect(t.received('schedule.paused')[0].body.data).toMatchObject({
      scheduleId: ok,
      revision: 2,
      reason: 'paused_by_request',
    });
    expect(t.received('target.disabled')[0].body.data).toMatchObject({ targetId: goneTarget });
    // run.succeeded was not subscribed: not written, not sent.
    expect(t.received('run.succeeded')).toHaveLength(0);
    const [{ n }] = await w.db.query(
      `SELECT count(*)::int AS n FROM events WHERE tenant_id = $1 AND type = 'run.succeeded'`,
      [t.tenant.id],
    );
    expect(n).toBe(0);

    // Opted in, run.succeeded comes; a tenant without subscriptions writes no event at all.
    await t.subscribe(['run.succeeded']);
    const second = await t.trigger(await t.schedule(await t.target(w.sink.url('/ok'))));
    await eventually(() => expect(byRun('run.succeeded', second)).toBeDefined());
    const quiet = await tenantWorld();
    const quietRun = await quiet.trigger(
      await quiet.schedule(await quiet.target(w.sink.url('/fail'))),
    );
    await eventually(async () => expect((await quiet.run(quietRun)).state).toBe('FAILED'));
    const [{ none }] = await w.db.query(
      'SELECT count(*)::int AS none FROM events WHERE tenant_id = $1',
      [quiet.tenant.id],
    );
    expect(none).toBe(0);
  });

  it('sends schedule.paused for an auto-pause (reason and note) and target.disabled for a PATCH', async () => {
    const t = await tenantWorld();
    await t.subscribe(['schedule.paused', 'target.disabled']);
    const id = await t.schedule(await t.target(w.sink.url('/fail')), {
      runAt: undefined,
      cron: '0 9 * * *',
      timezone: 'UTC',
      pauseAfterConsecutiveFailures: 1,
    });
    await t.trigger(id);
    await eventually(() => expect(t.received('schedule.paused')).toHaveLength(1));
    const { data } = verified(t.secret, t.received('schedule.paused')[0]);
    expect(data).toMatchObject({ scheduleId: id, reason: 'consecutive_failures' });
    expect(data.note).toContain('consecutive runs ended FAILED or UNKNOWN');

    const other = await t.target(w.sink.url('/ok'));
    const patched = await t.auth(w.t.http.patch(`/targets/${other}`)).send({ status: 'disabled' });
    expect(patched.status).toBe(200);
    // A second PATCH of a disabled target is no new event.
    await t.auth(w.t.http.patch(`/targets/${other}`)).send({ status: 'disabled' });
    await eventually(() => expect(t.received('target.disabled')).toHaveLength(1));
    expect(t.received('target.disabled')[0].body.data).toMatchObject({ targetId: other });
  });

  it('sends run.late when a run starts later than its schedule allows, once, and not for a punctual one', async () => {
    const t = await tenantWorld();
    await t.subscribe(['run.late']);
    const okTarget = await t.target(w.sink.url('/ok'));
    const strict = await t.schedule(okTarget, { lateAfterSeconds: 60 });
    const lenient = await t.schedule(okTarget, { lateAfterSeconds: 7 * 24 * 3600 });
    expect((await t.auth(w.t.http.get(`/schedules/${strict}`))).body.lateAfterSeconds).toBe(60);
    const anHourAgo = new Date(Date.now() - 3600_000);
    const lateRun = await w.insertRun(strict, anHourAgo, { publish: true });
    const fineRun = await w.insertRun(lenient, anHourAgo, { publish: true });
    await eventually(async () => {
      expect((await t.run(lateRun)).state).toBe('SUCCEEDED');
      expect((await t.run(fineRun)).state).toBe('SUCCEEDED');
    });
    await eventually(() => expect(t.received('run.late')).toHaveLength(1));
    const { data } = verified(t.secret, t.received('run.late')[0]);
    expect(data).toMatchObject({ runId: lateRun, scheduleId: strict, lateAfterSeconds: 60 });
    expect(data.lateBySeconds).toBeGreaterThan(3500);
  });

  it('an event of a transaction that rolls back is never delivered; the committed one is', async () => {
    const t = await tenantWorld();
    await t.subscribe(['run.failed', 'run.unknown']);
    const id = await t.schedule(await t.target(w.sink.url('/ok')));
    // The completion's transaction fails at its commit, after the event row was inserted.
    await w.db.query(`
      CREATE OR REPLACE FUNCTION test_refuse_failed_event() RETURNS trigger AS $$
      BEGIN
        IF NEW.type = 'run.failed' AND NEW.data->>'scheduleId' = '${id}' THEN
          RAISE EXCEPTION 'forced rollback after the event insert';
        END IF;
        RETURN NEW;
      END $$ LANGUAGE plpgsql`);
    await w.db.query(`
      CREATE CONSTRAINT TRIGGER test_refuse_failed_event AFTER INSERT ON events
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION test_refuse_failed_event()`);
    try {
      // No job: the built-in worker never sees it; the test is its external worker.
      const runId = await w.insertRun(id, new Date(Date.now() - 1000));
      const claim = await t.auth(w.t.http.post(`/runs/${runId}/claim`));
      expect(claim.status).toBe(200);
      const done = await t
        .auth(w.t.http.post(`/runs/${runId}/complete`))
        .send({ fencingToken: claim.body.fencingToken, outcome: 'failed', retryable: false });
      expect(done.status).toBe(500);
      expect((await t.run(runId)).state).toBe('RUNNING');
      // The lease expires, the sweeper ends the run UNKNOWN: that transaction commits.
      await eventually(() => expect(t.received('run.unknown')).toHaveLength(1), {
        timeoutMs: 20_000,
      });
      expect(verified(t.secret, t.received('run.unknown')[0]).data.runId).toBe(runId);
      expect((await t.run(runId)).state).toBe('UNKNOWN');
      expect(t.received('run.failed')).toHaveLength(0);
      const rows = await w.db.query('SELECT type FROM events WHERE tenant_id = $1', [t.tenant.id]);
      expect(rows).toEqual([{ type: 'run.unknown' }]);
    } finally {
      await w.db.query('DROP TRIGGER test_refuse_failed_event ON events');
    }
  });

  it('retries a failing or hanging subscriber with backoff while runs go on; gives up after the last attempt', async () => {
    const t = await tenantWorld();
    await t.subscribe(['run.failed']);
    const held = gate();
    const seen = new Map<string, number>();
    subscriber.behave(async (req) => {
      if (req.path !== t.path) return { status: 200 };
      const id = String(req.headers['webhook-id']);
      const nth = (seen.get(id) ?? 0) + 1;
      seen.set(id, nth);
      if (nth === 1) return { status: 500 };
      // The second attempt hangs past the delivery timeout.
      if (nth === 2) await held.promise;
      return { status: 200 };
    });
    const failing = await t.schedule(await t.target(w.sink.url('/fail')));
    await t.trigger(failing);
    // The second attempt is in flight (hanging) ...
    await eventually(() => expect([...seen.values()]).toEqual([2]));
    // While the subscriber hangs, runs start and end as ever.
    const ok = await t.schedule(await t.target(w.sink.url('/ok')));
    const runs = [await t.trigger(ok), await t.trigger(ok), await t.trigger(ok)];
    await eventually(async () => {
      for (const runId of runs) expect((await t.run(runId)).state).toBe('SUCCEEDED');
    });
    await eventually(async () => {
      const [row] = await w.db.query('SELECT state, attempts FROM events WHERE tenant_id = $1', [
        t.tenant.id,
      ]);
      expect(row).toEqual({ state: 'delivered', attempts: 3 });
    });
    held.open();
    // One webhook-id across the attempts: the receiver deduplicates on it.
    expect(new Set(t.received().map((r) => r.headers['webhook-id'])).size).toBe(1);

    // A subscriber that always fails is given up after EVENT_DELIVERY_MAX_ATTEMPTS (4).
    subscriber.behave((req) => ({ status: req.path === t.path ? 503 : 200 }));
    const doomed = await t.trigger(failing);
    await eventually(async () => {
      const [row] = await w.db.query(
        `SELECT state, attempts, last_error FROM events
          WHERE tenant_id = $1 AND data->>'runId' = $2`,
        [t.tenant.id, doomed],
      );
      expect(row).toMatchObject({ state: 'given_up', attempts: 4, last_error: 'answered 503' });
    });
  });

  describe('the API', () => {
    it('creates, reads, lists by cursor and deletes subscriptions', async () => {
      const t = await tenantWorld();
      const ids = [
        await t.subscribe(['run.failed']),
        await t.subscribe(['run.late', 'run.late', 'schedule.paused']),
        await t.subscribe(['target.disabled']),
      ];
      const one = await t.auth(w.t.http.get(`/subscriptions/${ids[1]}`));
      expect(one.status).toBe(200);
      expect(one.body).toMatchObject({ id: ids[1], targetId: t.hook });
      expect(one.body.eventTypes.sort()).toEqual(['run.late', 'schedule.paused']);
      const page1 = await t.auth(w.t.http.get('/subscriptions?limit=2'));
      expect(page1.body.items.map((s: { id: string }) => s.id)).toEqual(ids.slice(0, 2));
      const page2 = await t.auth(
        w.t.http.get(`/subscriptions?limit=2&cursor=${page1.body.nextCursor}`),
      );
      expect(page2.body).toMatchObject({ items: [{ id: ids[2] }], nextCursor: null });
      expect((await t.auth(w.t.http.delete(`/subscriptions/${ids[0]}`))).status).toBe(204);
      expect((await t.auth(w.t.http.get(`/subscriptions/${ids[0]}`))).status).toBe(404);
      expect((await t.auth(w.t.http.delete(`/subscriptions/${ids[0]}`))).status).toBe(404);
      // Another tenant sees none of them.
      const other = await tenantWorld();
      expect((await other.auth(w.t.http.get(`/subscriptions/${ids[1]}`))).status).toBe(404);
    });

    it.each([
      ['no event types', { eventTypes: [] }, 400],
      ['an unknown event type', { eventTypes: ['run.exploded'] }, 400],
      ['event types not a list', { eventTypes: 'run.failed' }, 400],
      ['no target', { targetId: undefined }, 400],
      ['a malformed target id', { targetId: 'not-a-uuid' }, 400],
      ['an unknown target', { targetId: randomUUID() }, 404],
    ])('refuses %s (problem+json, nothing written)', async (_, change, status) => {
      const t = await tenantWorld();
      const res = await t
        .auth(w.t.http.post('/subscriptions'))
        .send({ targetId: t.hook, eventTypes: ['run.failed'], ...change });
      expect(res.status).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const [{ n }] = await w.db.query(
        'SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = $1',
        [t.tenant.id],
      );
      expect(n).toBe(0);
    });

    it("refuses another tenant's target, and more than 20 subscriptions per tenant", async () => {
      const t = await tenantWorld();
      const other = await tenantWorld();
      const foreign = await t
        .auth(w.t.http.post('/subscriptions'))
        .send({ targetId: other.hook, eventTypes: ['run.failed'] });
      expect(foreign.status).toBe(404);
      for (let i = 0; i < 20; i++) await t.subscribe(['run.failed']);
      const over = await t
        .auth(w.t.http.post('/subscriptions'))
        .send({ targetId: t.hook, eventTypes: ['run.failed'] });
      expect(over.status).toBe(403);
      expect(over.body).toMatchObject({ quota: 'subscriptions', limit: 20 });
      const [{ n }] = await w.db.query(
        'SELECT count(*)::int AS n FROM subscriptions WHERE tenant_id = $1',
        [t.tenant.id],
      );
      expect(n).toBe(20);
    });

    it.each([-1, 1.5, 'soon', 7 * 24 * 3600 + 1])(
      'refuses lateAfterSeconds %p (400, nothing written)',
      async (value) => {
        const t = await tenantWorld();
        const res = await t
          .auth(w.t.http.post('/schedules'))
          .set('Idempotency-Key', randomUUID())
          .send({
            name: 's',
            targetId: t.hook,
            runAt: new Date(Date.now() + 3600_000).toISOString(),
            lateAfterSeconds: value,
          });
        expect(res.status).toBe(400);
        const [{ n }] = await w.db.query(
          'SELECT count(*)::int AS n FROM schedules WHERE tenant_id = $1',
          [t.tenant.id],
        );
        expect(n).toBe(0);
      },
    );
  });
});
