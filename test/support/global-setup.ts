import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../../src/embedded-postgres';
import { migrateDatabase } from '../../src/schema';
import { adminQuery, SERVER_URL_ENV, TEMPLATE_ENV, withDatabaseName } from './test-postgres';

/**
 * One Postgres for the whole run: DATABASE_URL when set, else an embedded one in a temp dir.
 * A template database is migrated once; each test file clones it (CREATE DATABASE … TEMPLATE),
 * which is far faster than migrating per file and keeps files from sharing data.
 */
export default async function globalSetup(): Promise<void> {
  let serverUrl = process.env.DATABASE_URL;
  if (!serverUrl) {
    const dataDir = mkdtempSync(join(tmpdir(), 'dueline-test-'));
    chmodSync(dataDir, 0o755); // as root, the server runs as `postgres` and must reach it
    const embedded = await startEmbeddedPostgres({ dataDir, log: () => undefined });
    (globalThis as Record<string, unknown>).__duelineEmbedded = { ...embedded, dataDir };
    serverUrl = embedded.url;
    console.log(`\ntests: embedded PostgreSQL in ${dataDir}`);
  } else {
    console.log('\ntests: PostgreSQL from DATABASE_URL');
  }
  const template = `dueline_tpl_${process.pid}`;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template}`);
  await adminQuery(serverUrl, `CREATE DATABASE ${template}`);
  await migrateDatabase(withDatabaseName(serverUrl, template));
  process.env[SERVER_URL_ENV] = serverUrl;
  process.env[TEMPLATE_ENV] = template;
}
