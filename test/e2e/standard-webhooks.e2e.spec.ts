import { Webhook } from 'standardwebhooks';
import { RelayService } from '../../src/relay';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';
import type { SinkRequest } from '../support/http-sink';

const secretOf = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString('base64')}`;

/** What a receiver does: the library's own verification over the raw body and the headers. */
function verifiesWith(secret: string, req: SinkRequest): boolean {
  try {
    new Webhook(secret).verify(req.raw, req.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

/**
 * Real deliveries from the built-in worker, verified with the `standardwebhooks` package (what a
 * receiver would use), and secret rotation with an overlap through the API.
 */
describe('Standard Webhooks deliveries and secret rotation', () => {
  let w: ExecutionWorld;

  const delivered = async (targetId: string): Promise<SinkRequest> => {
    const schedule = await w.createSchedule(targetId);
    const runId = await w.trigger(schedule);
    await eventually(async () => expect((await w.run(runId)).state).toBe('SUCCEEDED'));
    const [req] = w.sink.forRun(runId);
    return req;
  };
  const rotate = (targetId: string, body: object) =>
    w.auth(w.t.http.post(`/targets/${targetId}/secrets/rotate`)).send(body);
  const storedSecrets = async (targetId: string) =>
    (
      await w.db.query(
        `SELECT signing_secret, previous_signing_secret, previous_signing_secret_expires_at
           FROM targets WHERE id = $1`,
        [targetId],
      )
    )[0];

  beforeAll(async () => {
    w = await startExecutionWorld('api,worker,relay');
  });
  afterEach(() => w.sink.behave(() => ({ status: 200, body: { ok: true } })));
  afterAll(() => w.close());

  it('every attempt carries webhook-id (the run id), a timestamp and a signature the library accepts', async () => {
    const secret = secretOf(3);
    const target = await w.createTarget({ signingSecret: secret });
    w.sink.behave((req) => ({ status: req.headers['x-dueline-attempt'] === '1' ? 503 : 200 }));
    const schedule = await w.createSchedule(target);
    const runId = await w.trigger(schedule);
    await eventually(async () => expect((await w.run(runId)).state).toBe('SUCCEEDED'));
    const attempts = w.sink.forRun(runId);
    expect(attempts).toHaveLength(2);
    for (const req of attempts) {
      expect(req.headers['webhook-id']).toBe(runId);
      expect(req.headers['webhook-timestamp']).toMatch(/^\d+$/);
      expect(req.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      expect(verifiesWith(secret, req)).toBe(true);
      expect(verifiesWith(secretOf(4), req)).toBe(false);
      // The dueline headers stay beside them.
      expect(req.headers['x-dueline-run-id']).toBe(runId);
      expect(req.headers['x-dueline-signature']).toMatch(/^v1=[0-9a-f]{64}$/);
    }
  });

  it('a rotation signs with both secrets for the overlap, then the old one is dropped', async () => {
    const old = secretOf(5);
    const target = await w.createTarget({ signingSecret: old });

    const res = await rotate(target, { overlapSeconds: 3600 });
    expect(res.status).toBe(200);
    const fresh: string = res.body.generatedSecret;
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(res.body.target).toMatchObject({ id: target, hasSigningSecret: true });
    const expiresAt = Date.parse(res.body.target.previousSecretExpiresAt);
    expect(expiresAt).toBeGreaterThan(Date.now() + 3500_000);
    expect(expiresAt).toBeLessThan(Date.now() + 3700_000);
    expect(JSON.stringify(res.body.target)).not.toContain(old);

    const during = await delivered(target);
    expect((during.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect(verifiesWith(fresh, during)).toBe(true);
    expect(verifiesWith(old, during)).toBe(true);

    // The overlap ends (moved into the past rather than waited for): only the new one signs,
    // and the relay's round forgets the old one.
    await w.db.query(
      `UPDATE targets SET previous_signing_secret_expires_at = now() - interval '1 second'
        WHERE id = $1`,
      [target],
    );
    const after = await delivered(target);
    expect((after.headers['webhook-signature'] as string).split(' ')).toHaveLength(1);
    expect(verifiesWith(fresh, after)).toBe(true);
    expect(verifiesWith(old, after)).toBe(false);
    await w.t.app.get(RelayService).tick();
    expect(await storedSecrets(target)).toMatchObject({
      previous_signing_secret: null,
      previous_signing_secret_expires_at: null,
    });
    const read = await w.auth(w.t.http.get(`/targets/${target}`));
    expect(read.body.previousSecretExpiresAt).toBeNull();
  });

  it('holds at most two secrets: a second rotation drops the oldest; overlap 0 drops at once', async () => {
    const first = secretOf(6);
    const second = secretOf(7);
    const third = secretOf(8);
    const target = await w.createTarget({ signingSecret: first });
    expect((await rotate(target, { signingSecret: second, overlapSeconds: 600 })).status).toBe(200);
    const res = await rotate(target, { signingSecret: third, overlapSeconds: 600 });
    expect(res.status).toBe(200);
    expect(res.body.generatedSecret).toBeNull();
    const req = await delivered(target);
    expect((req.headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    expect([first, second, third].map((s) => verifiesWith(s, req))).toEqual([false, true, true]);

    expect((await rotate(target, { signingSecret: first, overlapSeconds: 0 })).status).toBe(200);
    const now = await delivered(target);
    expect([first, second, third].map((s) => verifiesWith(s, now))).toEqual([true, false, false]);
  });

  it('refuses a bad rotation with a 400 problem and changes nothing', async () => {
    const secret = secretOf(9);
    const target = await w.createTarget({ signingSecret: secret });
    const before = await storedSecrets(target);
    const bad: Array<[object, string]> = [
      [{ signingSecret: 'not-a-standard-secret-at-all' }, 'signingSecret'],
      [{ signingSecret: `whsec_${Buffer.alloc(8).toString('base64')}` }, 'signingSecret'],
      [{ signingSecret: 'whsec_!!!!' }, 'signingSecret'],
      [{ overlapSeconds: -1 }, 'overlapSeconds'],
      [{ overlapSeconds: 31 * 86_400 }, 'overlapSeconds'],
      [{ overlapSeconds: 1.5 }, 'overlapSeconds'],
      [{ unknown: true }, 'unknown'],
    ];
    for (const [body, field] of bad) {
      const res = await rotate(target, body);
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      const given = (body as { signingSecret?: string }).signingSecret;
      if (given) expect(res.text).not.toContain(given);
    }
    expect(await storedSecrets(target)).toEqual(before);
    expect((await rotate('00000000-0000-4000-8000-000000000000', {})).status).toBe(404);
  });
});
