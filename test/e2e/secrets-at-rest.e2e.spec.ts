import { execFile } from 'node:child_process';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { MIGRATIONS } from '../../migrations';
import { runMigrations } from '../../src/database';
import { migrateDatabase, SCHEMA } from '../../src/schema';
import { keyIdOf, parseKeyring, SecretBox } from '../../src/secrets';
import { TargetsService } from '../../src/targets';
import { createTestDatabase, TestDatabase } from '../support/test-database';
import { startTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

const ROOT = resolve(__dirname, '../..');
const ROTATE_CLI = join(ROOT, 'dist/src/cli/rotate-secrets-key.js');
const keyText = (fill: number) => Buffer.alloc(32, fill).toString('base64');
const secretOf = (fill: number) => `whsec_${Buffer.alloc(32, fill).toString('base64')}`;

async function tableText(url: string, table: string): Promise<string> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT to_jsonb(t)::text AS row FROM ${table} t`);
    return rows.map((r) => r.row as string).join('\n');
  } finally {
    await client.end();
  }
}

/** Signing secrets are sealed with AES-256-GCM in the table; only the worker's read opens them. */
describe('secrets at rest', () => {
  let t: TestApp;
  let tenant: { id: string; apiKey: string };
  const as = (req: import('supertest').Test) => req.set('Authorization', `Bearer ${tenant.apiKey}`);

  beforeAll(async () => {
    t = await startTestApp({ SECRETS_KEY: keyText(21) });
    tenant = await t.createTenant('secrets');
  });
  afterAll(() => t.close());

  it('the targets table holds no secret: each value is sealed and names its key', async () => {
    const first = secretOf(31);
    const second = secretOf(32);
    const res = await as(t.http.post('/targets')).send({
      name: 'sealed',
      url: 'https://example.com/hook',
      signingSecret: first,
    });
    expect(res.status).toBe(201);
    const rotated = await as(t.http.post(`/targets/${res.body.id}/secrets/rotate`)).send({
      signingSecret: second,
      overlapSeconds: 60,
    });
    expect(rotated.status).toBe(200);

    const text = await tableText(t.database.url, 'targets');
    for (const secret of [first, second]) {
      expect(text).not.toContain(secret);
      expect(text).not.toContain(secret.slice('whsec_'.length));
    }
    const kid = keyIdOf(Buffer.alloc(32, 21));
    expect(text).toContain(`enc:v1:${kid}:`);
    // The worker's read opens them, newest first.
    const dispatch = await t.app
      .get(TargetsService)
      .getForDispatch([{ tenantId: tenant.id, targetId: res.body.id }]);
    expect(dispatch.of(tenant.id, res.body.id)?.signingSecrets).toEqual([second, first]);
  });

  describe('the migration and the key rotation', () => {
    let db: TestDatabase;
    const before = MIGRATIONS.findIndex((m) => m.name === 'EncryptSecretsAtRest1796210000000');

    beforeAll(async () => {
      db = await createTestDatabase({ empty: true });
    });
    afterAll(() => db.drop());

    const query = async (sql: string, params: unknown[] = []) => {
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        return (await client.query(sql, params)).rows;
      } finally {
        await client.end();
      }
    };

    it('seals the secrets stored in plain text before it, and refuses to run without a key', async () => {
      expect(before).toBeGreaterThan(0);
      await runMigrations(db.url, { ...SCHEMA, migrations: MIGRATIONS.slice(0, before) });
      const [{ id: tenantId }] = await query(
        `INSERT INTO tenants (name, max_active_schedules, dispatch_rate_per_second, max_concurrent_runs)
         VALUES ('legacy', 10, 10, 10) RETURNING id`,
      );
      await query(
        `INSERT INTO targets (tenant_id, name, url, signing_secret, previous_signing_secret,
                              previous_signing_secret_expires_at)
         VALUES ($1, 'legacy', 'https://example.com/', 'legacy-plain-secret-0123', $2,
                 now() + interval '1 hour')`,
        [tenantId, secretOf(41)],
      );
      await expect(migrateDatabase(db.url)).rejects.toThrow(/SECRETS_KEY/);
      expect((await query('SELECT signing_secret FROM targets'))[0].signing_secret).toBe(
        'legacy-plain-secret-0123',
      );

      const keyring = parseKeyring(keyText(51));
      await migrateDatabase(db.url, keyring);
      const text = await tableText(db.url, 'targets');
      expect(text).not.toContain('legacy-plain-secret-0123');
      expect(text).not.toContain(secretOf(41));
      const [row] = await query('SELECT signing_secret, previous_signing_secret FROM targets');
      const box = new SecretBox(keyring);
      expect(box.open(row.signing_secret, 'target.signing_secret')).toBe(
        'legacy-plain-secret-0123',
      );
      expect(box.open(row.previous_signing_secret, 'target.signing_secret')).toBe(secretOf(41));
    });

    it('npm run secrets:rotate-key re-seals every value under the first key of SECRETS_KEY', async () => {
      const sealedUnder = async () =>
        (await query('SELECT signing_secret FROM targets')).map(
          (r) => (r.signing_secret as string).split(':')[2],
        );
      expect(await sealedUnder()).toEqual([keyIdOf(Buffer.alloc(32, 51))]);
      const { stdout } = await promisify(execFile)(process.execPath, [ROTATE_CLI], {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: db.url,
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          SECRETS_KEY: `${keyText(52)},${keyText(51)}`,
        },
      });
      expect(stdout).toMatch(/"resealed":1/);
      expect(await sealedUnder()).toEqual([keyIdOf(Buffer.alloc(32, 52))]);
      // The old key is no longer needed: the new one alone opens everything.
      const [row] = await query('SELECT signing_secret, previous_signing_secret FROM targets');
      const box = new SecretBox(parseKeyring(keyText(52)));
      expect(box.open(row.signing_secret, 'target.signing_secret')).toBe(
        'legacy-plain-secret-0123',
      );
      expect(box.open(row.previous_signing_secret, 'target.signing_secret')).toBe(secretOf(41));
    });
  });
});
