import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { adminQuery, SERVER_URL_ENV, TEMPLATE_ENV, withDatabaseName } from './test-postgres';

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of this file's own, cloned from the run's template. */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const serverUrl = process.env[SERVER_URL_ENV];
  const template = process.env[TEMPLATE_ENV];
  if (!serverUrl || !template) throw new Error('test database server not set up (global-setup)');
  const name = `dueline_t_${randomBytes(6).toString('hex')}`;
  await adminQuery(
    serverUrl,
    `CREATE DATABASE ${name} ${options.empty ? '' : `TEMPLATE ${template}`}`,
  );
  return {
    url: withDatabaseName(serverUrl, name),
    name,
    drop: () => adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

/** A fresh database (createTestDatabase) and one client connected to it, for a file's own SQL. */
export async function connectTestDatabase(
  options: { empty?: boolean } = {},
): Promise<{ db: TestDatabase; client: Client }> {
  const db = await createTestDatabase(options);
  const client = new Client({ connectionString: db.url });
  try {
    await client.connect();
  } catch (error) {
    await db.drop();
    throw error;
  }
  return { db, client };
}

/** Ends what connectTestDatabase opened (either is missing if the opening failed). */
export async function closeTestDatabase(opened: {
  db?: TestDatabase;
  client?: Client;
}): Promise<void> {
  await opened.client?.end();
  await opened.db?.drop();
}
