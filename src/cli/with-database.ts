import { loadConfig } from '../config';
import { startEmbeddedPostgres } from '../embedded-postgres';

/** Runs `work` against DATABASE_URL, or against the embedded Postgres in DATA_DIR. */
export async function withDatabase<T>(work: (url: string) => Promise<T>): Promise<T> {
  const config = loadConfig({
    ...process.env,
    ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? 'x'.repeat(16),
  });
  if (config.databaseUrl) return work(config.databaseUrl);
  const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: () => undefined });
  try {
    return await work(embedded.url);
  } finally {
    await embedded.stop();
  }
}
