import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';
import { gate } from '../support/http-sink';

const BIN = join(__dirname, '../../dist/src/cli/dueline.js');

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * The `dueline` bin as a user runs it: the built program in a child process, against the whole
 * app listening on a port (api, poller, relay and worker roles), configured only by DUELINE_URL
 * and DUELINE_API_KEY. Each command's exit code is part of its contract.
 */
describe('dueline CLI against the real app', () => {
  let w: ExecutionWorld;
  let url: string;

  const run = (args: string[], apiKey: string | undefined = w.tenant.apiKey): Promise<Result> =>
    new Promise((resolve) => {
      const env = { PATH: process.env.PATH ?? '', DUELINE_URL: url, DUELINE_API_KEY: apiKey ?? '' };
      execFile(
        process.execPath,
        [BIN, ...args],
        { env, timeout: 60_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
      );
    });
  const json = async (args: string[]) => {
    const result = await run([...args, '--output', 'json']);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout);
  };

  beforeAll(async () => {
    w = await startExecutionWorld('api,poller,relay,worker');
    await w.t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(w.t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => w.close());

  it('creates a target and lists it, never showing a secret', async () => {
    const created = await json(['targets', 'create', 'billing', w.sink.url(), '--method', 'put']);
    expect(created).toMatchObject({ name: 'billing', method: 'PUT', url: w.sink.url() });
    const table = await run(['targets', 'list']);
    expect(table.code).toBe(0);
    const [header, ...rows] = table.stdout.trim().split('\n');
    expect(header).toMatch(/^ID\s+NAME\s+METHOD\s+URL\s+DEDUPLICATES\s+SECRET$/);
    expect(rows.some((r) => r.startsWith(created.id) && /\bbilling\s+PUT\b/.test(r))).toBe(true);
  });

  it('creates, reads, previews, pauses, resumes and cancels a cron schedule', async () => {
    const targetId = await w.createTarget();
    const schedule = await json([
      'schedules',
      'create',
      '--name',
      'nightly',
      '--target',
      targetId,
      '--cron',
      '30 2 * * *',
      '--timezone',
      'Europe/Berlin',
      '--payload',
      '{"report":"daily"}',
    ]);
    expect(schedule).toMatchObject({ name: 'nightly', status: 'active', revision: 1 });
    expect(schedule.payload).toEqual({ report: 'daily' });

    const got = await run(['schedules', 'get', schedule.id]);
    expect(got.stdout).toMatch(/^status\s+active$/m);
    expect(got.stdout).toContain('30 2 * * * (Europe/Berlin)');

    // Across the spring-forward night 02:30 does not exist in Berlin: the preview skips it.
    const preview = await json([
      'schedules',
      'preview',
      '--cron',
      '30 2 * * *',
      '--timezone',
      'Europe/Berlin',
      '--from',
      '2027-03-26T12:00:00Z',
      '--count',
      '3',
    ]);
    expect(preview.items.map((i: { local: string }) => i.local.slice(0, 10))).toEqual([
      '2027-03-27',
      '2027-03-29',
      '2027-03-30',
    ]);
    const byId = await run(['schedules', 'preview', schedule.id, '--count', '2']);
    expect(byId.stdout.trim().split('\n')).toHaveLength(3);

    expect((await json(['schedules', 'pause', schedule.id])).status).toBe('paused');
    const resumed = await json(['schedules', 'resume', schedule.id]);
    expect(resumed).toMatchObject({ status: 'active', revision: 3 });
    const listed = await json(['schedules', 'list', '--status', 'active']);
    expect(listed.map((s: { id: string }) => s.id)).toContain(schedule.id);
    expect((await json(['schedules', 'cancel', schedule.id])).status).toBe('cancelled');
  });

  it('triggers a run and waits for SUCCEEDED, with progress on stderr', async () => {
    const targetId = await w.createTarget();
    const scheduleId = await w.createSchedule(targetId);
    const result = await run(['schedules', 'trigger', scheduleId, '--wait', '--output', 'json']);
    expect(result.code).toBe(0);
    const run_ = JSON.parse(result.stdout);
    expect(run_).toMatchObject({ scheduleId, state: 'SUCCEEDED' });
    expect(result.stderr).toContain(`run ${run_.id}: QUEUED`);
    expect(result.stderr).toContain(`run ${run_.id}: SUCCEEDED`);
    expect(w.sink.requests.some((r) => r.headers['idempotency-key'] === run_.id)).toBe(true);

    const detail = await run(['runs', 'get', run_.id]);
    expect(detail.stdout).toMatch(/^state\s+SUCCEEDED$/m);
    expect(detail.stdout).toMatch(/^ATTEMPT\s+FENCE\s+STARTED\s+MS\s+OUTCOME\s+HTTP\s+ERROR$/m);
    expect(detail.stdout).toMatch(/^1\s+1\s+\S+\s+\d+\s+succeeded\s+200\s+-$/m);
    const runs = await json(['runs', 'list', scheduleId, '--state', 'SUCCEEDED']);
    expect(runs.map((r: { id: string }) => r.id)).toEqual([run_.id]);
  });

  it('exits 8 when the waited-for run fails', async () => {
    w.sink.behave(() => ({ status: 400, body: { error: 'no' } }));
    try {
      const targetId = await w.createTarget();
      const scheduleId = await w.createSchedule(targetId);
      const result = await run(['schedules', 'trigger', scheduleId, '--wait']);
      expect(result.code).toBe(8);
      expect(result.stdout).toMatch(/^state\s+FAILED$/m);
      expect(result.stderr).toMatch(/ended FAILED/);
    } finally {
      w.sink.behave(() => ({ status: 200, body: { ok: true } }));
    }
  });

  it('cancels a run in flight, says an attempt may still act, and refuses a finished one', async () => {
    const held = gate();
    w.sink.behave(async () => {
      await held.promise;
      return { status: 200 };
    });
    try {
      const targetId = await w.createTarget();
      const scheduleId = await w.createSchedule(targetId);
      const triggered = await json(['schedules', 'trigger', scheduleId]);
      await eventually(async () =>
        expect((await json(['runs', 'get', triggered.id])).state).toBe('RUNNING'),
      );
      const cancelled = await run(['runs', 'cancel', triggered.id]);
      expect(cancelled.code).toBe(0);
      expect(cancelled.stdout).toMatch(/^inFlight\s+yes: an attempt may still act$/m);
      held.open();
      await eventually(async () =>
        expect((await json(['runs', 'get', triggered.id])).finishedAt).not.toBeNull(),
      );
      const again = await run(['runs', 'cancel', triggered.id]);
      expect(again.code).toBe(6);
      expect(again.stderr).toMatch(/^dueline: 409 /);
      expect((await run(['runs', 'cancel', randomUUID()])).code).toBe(5);
    } finally {
      held.open();
      w.sink.behave(() => ({ status: 200, body: { ok: true } }));
    }
  });

  it('exits by outcome, with the problem as a readable message', async () => {
    const missing = await run(['schedules', 'get', randomUUID()]);
    expect(missing).toMatchObject({ code: 5, stdout: '' });
    expect(missing.stderr).toMatch(/^dueline: 404 Not Found: /);

    const invalid = await run([
      'schedules',
      'create',
      '--name',
      'bad',
      '--target',
      randomUUID(),
      '--cron',
      '61 * * * *',
      '--timezone',
      'Mars/Olympus',
    ]);
    expect(invalid.code).toBe(3);
    expect(invalid.stderr).toMatch(/^dueline: 400 Invalid request/);
    expect(invalid.stderr).toMatch(/^ {2}timezone: /m);

    const denied = await run(['schedules', 'list'], 'dl_0000000000000000_wrong');
    expect(denied.code).toBe(4);
    expect(denied.stderr).toContain('401 Unauthorized');

    expect((await run(['schedules', 'frobnicate'])).code).toBe(2);
    expect((await run(['schedules', 'list', '--output', 'yaml'])).code).toBe(2);
    expect((await run(['schedules', 'get', randomUUID(), '--cron', 'x'])).code).toBe(2);
    expect((await run(['schedules', 'list'], '')).stderr).toContain('DUELINE_API_KEY');

    const usage = await run(['usage']);
    expect(usage.code).toBe(0);
    expect(usage.stdout).toMatch(/^activeSchedules\s+\d+ of 10000$/m);
    expect(usage.stdout).toMatch(/^waiting\.concurrency\s+0$/m);
    const asJson = await json(['usage']);
    expect(asJson).toMatchObject({ tenantId: w.tenant.id, quotas: { maxActiveSchedules: 10000 } });
  });

  it('pages through everything with --all, reporting progress', async () => {
    const targetId = await w.createTarget();
    await Promise.all(
      Array.from({ length: 105 }, (_, i) => w.createSchedule(targetId, { name: `bulk-${i}` })),
    );
    const result = await run(['schedules', 'list', '--all', '--output', 'json']);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).length).toBeGreaterThanOrEqual(105);
    expect(result.stderr).toMatch(/^fetched 100 schedules…$/m);
  });
});
