import { ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { transpileModule, ModuleKind, ScriptTarget } from 'typescript';
import { unusedListenPort } from '../../src/common';
import { ExecutionWorld, startExecutionWorld } from '../integration/execution.fixtures';
import { eventually } from '../support/eventually';

const ROOT = resolve(__dirname, '../..');
// Under the repository, so the receivers resolve standardwebhooks and jose from node_modules.
const WORK_DIR = join(ROOT, 'node_modules/.cache/dueline-readme-receivers');
const SECRET = `whsec_${Buffer.alloc(32, 0x42).toString('base64')}`;

/** The TypeScript block after `<!-- receiver:<name> -->` in README.md, compiled to CommonJS. */
function receiverFromReadme(name: string): string {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const match = new RegExp(`<!-- receiver:${name} -->\\s*\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(
    readme,
  );
  if (!match) throw new Error(`README.md has no receiver:${name} block`);
  const js = transpileModule(match[1], {
    compilerOptions: { module: ModuleKind.CommonJS, target: ScriptTarget.ES2022 },
  }).outputText;
  mkdirSync(WORK_DIR, { recursive: true });
  const file = join(WORK_DIR, `${name}.js`);
  writeFileSync(file, js);
  return file;
}

async function startReceiver(name: string, env: Record<string, string>, port: number) {
  const child = spawn(process.execPath, [receiverFromReadme(name)], {
    env: { ...process.env, ...env, PORT: String(port) },
  });
  let output = '';
  child.stderr.setEncoding('utf8').on('data', (c: string) => (output += c));
  const url = `http://127.0.0.1:${port}/`;
  await eventually(async () => {
    const res = await fetch(url, { method: 'POST', body: '{}' }).catch(() => null);
    expect(res?.status).toBe(401); // up, and refusing what is not ours
  }).catch((error: unknown) => {
    throw new Error(`receiver ${name} did not start: ${output}`, { cause: error });
  });
  return { url, child };
}

/** The README's receivers, run as written against real deliveries and crafted calls. */
describe('README receivers', () => {
  let w: ExecutionWorld;
  let apiPort: number;
  const children: ChildProcessWithoutNullStreams[] = [];

  beforeAll(async () => {
    apiPort = await unusedListenPort();
    w = await startExecutionWorld('api,worker,relay', {
      OIDC_ISSUER: `http://127.0.0.1:${apiPort}`,
    });
    // The JWT receiver fetches the JWKS over HTTP.
    await w.t.app.listen(apiPort, '127.0.0.1');
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    await w.close();
  });

  const deliver = async (body: object) => {
    const res = await w.auth(w.t.http.post('/targets')).send({ name: `r-${Date.now()}`, ...body });
    expect(res.status).toBe(201);
    const runId = await w.trigger(await w.createSchedule(res.body.id));
    return eventually(async () => {
      const run = await w.run(runId);
      expect(run.state).toMatch(/SUCCEEDED|FAILED/);
      return run;
    });
  };

  it('standard webhooks: verifies, deduplicates on webhook-id, refuses a stale fencing token', async () => {
    const receiver = await startReceiver(
      'standard-webhooks',
      { SIGNING_SECRET: SECRET },
      await unusedListenPort(),
    );
    children.push(receiver.child);
    const run = await deliver({ url: receiver.url, signingSecret: SECRET });
    expect(run.state).toBe('SUCCEEDED');

    const webhook = new Webhook(SECRET);
    const send = (id: string, body: object, secret = webhook) => {
      const raw = JSON.stringify(body);
      const at = new Date();
      return fetch(receiver.url, {
        method: 'POST',
        body: raw,
        headers: {
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
          'webhook-signature': secret.sign(id, at, raw),
        },
      }).then((r) => r.status);
    };
    // A repeat of the delivered run is answered without doing the work again (it would fail).
    expect(await send(run.id, { fencingToken: 1, payload: { fail: true } })).toBe(200);
    // An attempt that fails leaves its fence; an older worker's call is then refused.
    expect(await send('run-b', { fencingToken: 2, payload: { fail: true } })).toBe(500);
    expect(await send('run-b', { fencingToken: 1, payload: {} })).toBe(409);
    expect(await send('run-b', { fencingToken: 3, payload: {} })).toBe(200);
    // Signed with another secret: refused.
    const other = new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`);
    expect(await send('run-c', { fencingToken: 1, payload: {} }, other)).toBe(401);
  });

  it('JWT: verifies dueline-issued tokens against the JWKS, refuses others', async () => {
    const port = await unusedListenPort();
    const url = `http://127.0.0.1:${port}/`;
    const receiver = await startReceiver(
      'jwt',
      { DUELINE_URL: `http://127.0.0.1:${apiPort}`, TARGET_URL: url },
      port,
    );
    children.push(receiver.child);
    const run = await deliver({ url, auth: { type: 'oidc' } });
    expect(run.state).toBe('SUCCEEDED');
    expect(run.attempts[0].response.bodyExcerpt).toBe(run.id);
    // For another audience: refused (so the run fails; 401 is not retried).
    const wrong = await deliver({
      url,
      auth: { type: 'oidc', audience: 'https://someone-else.example' },
    });
    expect(wrong.state).toBe('FAILED');
    expect(wrong.attempts[0].httpStatus).toBe(401);
  });
});
