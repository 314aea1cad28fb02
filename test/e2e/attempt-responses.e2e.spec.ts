import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';

/**
 * What the target answered is kept on each attempt and shown on GET /runs/{id}: its status, the
 * headers of the allow-list and the start of the body, as configured. Redirects are not followed.
 */
describe('attempt responses', () => {
  let w: ExecutionWorld;
  let target: string;

  const finalRun = async (runId: string, state: string) =>
    eventually(async () => {
      const run = await w.run(runId);
      expect(run.state).toBe(state);
      return run;
    });

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker,relay', {
      ATTEMPT_RESPONSE_HEADERS: 'content-type,retry-after,x-upstream',
      ATTEMPT_RESPONSE_BODY_BYTES: '1000',
    });
    target = await w.createTarget();
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(() => w.close());

  it('keeps status, allow-listed headers and the configured start of the body per attempt', async () => {
    w.sink.behave((req) =>
      req.headers['x-dueline-attempt'] === '1'
        ? {
            status: 503,
            body: { error: 'busy', filler: 'é'.repeat(2000) },
            headers: {
              'Retry-After': '0',
              'X-Upstream': 'db-7',
              'Set-Cookie': 'session=s3cr3t',
              Server: 'not-kept',
            },
          }
        : { status: 202, body: { accepted: true } },
    );
    const runId = await w.trigger(await w.createSchedule(target));
    const run = await finalRun(runId, 'SUCCEEDED');
    const [first, second] = run.attempts;
    expect(first.response).toEqual({
      status: 503,
      headers: {
        'content-type': 'application/json',
        'retry-after': '0',
        'x-upstream': 'db-7',
      },
      bodyExcerpt: expect.stringMatching(/^\{"error":"busy","filler":"é+$/),
    });
    expect(Buffer.byteLength(first.response.bodyExcerpt)).toBeLessThanOrEqual(1000);
    expect(Buffer.byteLength(first.response.bodyExcerpt)).toBeGreaterThan(990);
    expect(first.httpStatus).toBe(503);
    expect(second.response).toEqual({
      status: 202,
      headers: { 'content-type': 'application/json' },
      bodyExcerpt: '{"accepted":true}',
    });
    // Stored that way, not only shown.
    const stored = await w.db.query(
      `SELECT response_headers, response_body FROM attempts WHERE run_id = $1 ORDER BY attempt_no`,
      [runId],
    );
    expect(JSON.stringify(stored)).not.toContain('s3cr3t');
  });

  it('a redirect is a failed attempt with its location recorded, never followed', async () => {
    w.sink.behave(() => ({
      status: 307,
      headers: { Location: `${w.sink.url('/moved')}?to=elsewhere` },
    }));
    const runId = await w.trigger(await w.createSchedule(target));
    const run = await finalRun(runId, 'FAILED');
    expect(run.attemptCount).toBe(1);
    expect(run.attempts[0]).toMatchObject({
      outcome: 'failed',
      httpStatus: 307,
      response: { status: 307, headers: { location: `${w.sink.url('/moved')}?to=elsewhere` } },
      error: expect.stringContaining(`redirect to "${w.sink.url('/moved')}?to=elsewhere"`),
    });
    expect(w.sink.forRun(runId).map((r) => r.path)).toEqual(['/hook']);
    expect(w.sink.requests.some((r) => r.path.startsWith('/moved'))).toBe(false);
  });

  it('an attempt the target never answered keeps no response', async () => {
    w.sink.behave(() => ({ destroy: true }));
    const runId = await w.trigger(await w.createSchedule(target));
    const run = await finalRun(runId, 'UNKNOWN');
    expect(run.attempts[0]).toMatchObject({ httpStatus: null, response: null });
  });
});
