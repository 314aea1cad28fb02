import { Client } from 'pg';

/** Set by global-setup for every test worker: where the server is and which template to clone. */
export const SERVER_URL_ENV = 'DUELINE_TEST_SERVER_URL';
export const TEMPLATE_ENV = 'DUELINE_TEST_TEMPLATE_DB';

export function withDatabaseName(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
