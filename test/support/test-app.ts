import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { createApp } from '../../src/app.factory';
import type { Clock } from '../../src/common';
import { AppConfig, loadConfig } from '../../src/config';
import { createTestDatabase, TestDatabase } from './test-database';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
/** The key every test app seals secrets at rest with (32 bytes, base64). */
export const TEST_SECRETS_KEY = Buffer.alloc(32, 0x5e).toString('base64');

export interface TestApp {
  app: INestApplication;
  http: TestAgent;
  config: AppConfig;
  database: TestDatabase;
  /** Creates a tenant through the admin API and returns its id and API key. */
  createTenant(
    name?: string,
    quotas?: Record<string, number>,
  ): Promise<{ id: string; apiKey: string }>;
  close(): Promise<void>;
}

/**
 * The whole application, as main.ts builds it, on a fresh database of its own. Configuration
 * overrides come as the environment variables an operator would set; `clock` replaces the
 * process clock where a test moves time.
 */
export async function startTestApp(
  env: Record<string, string> = {},
  options: { database?: TestDatabase; clock?: Clock } = {},
): Promise<TestApp> {
  // Apps that share a database (several replicas) leave dropping it to the one that created it.
  const ownsDatabase = !options.database;
  const database = options.database ?? (await createTestDatabase());
  const config = loadConfig({
    DATABASE_URL: database.url,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: 'silent',
    ROLES: 'api',
    ...env,
  });
  const app = await createApp(config, options.clock);
  await app.init();
  const http = request(app.getHttpServer());
  let closed = false;
  return {
    app,
    http,
    config,
    database,
    async createTenant(name = 'acme', quotas = {}) {
      const res = await http
        .post('/tenants')
        .set('Authorization', `Bearer ${TEST_ADMIN_TOKEN}`)
        .send({ name, quotas });
      if (res.status !== 201) throw new Error(`tenant creation failed: ${res.status} ${res.text}`);
      return { id: res.body.id as string, apiKey: res.body.apiKey as string };
    },
    async close() {
      if (closed) return;
      closed = true;
      await app.close();
      if (ownsDatabase) await database.drop();
    },
  };
}
