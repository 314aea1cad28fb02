import { loadConfig } from '../config';
import { startEmbeddedPostgres } from '../embedded-postgres';
import { parseKeyring, readOrCreateKeyFile, type SecretKeyring } from '../secrets';

/** What a command gets: the database and the keyring secrets at rest are sealed with. */
export interface CliDatabase {
  url: string;
  keyring: SecretKeyring;
  /** Embedded mode: the keyring comes from (and a rotation writes) DATA_DIR/secrets-key. */
  embeddedDataDir: string | null;
}

/**
 * Runs `work` against DATABASE_URL (with SECRETS_KEY), or against the embedded Postgres in
 * DATA_DIR (with SECRETS_KEY, or the key kept in DATA_DIR).
 */
export async function withDatabase<T>(work: (db: CliDatabase) => Promise<T>): Promise<T> {
  const config = loadConfig({
    ...process.env,
    ADMIN_TOKEN: process.env.ADMIN_TOKEN ?? 'x'.repeat(16),
  });
  if (config.databaseUrl) {
    return work({
      url: config.databaseUrl,
      keyring: config.secretsKeyring!,
      embeddedDataDir: null,
    });
  }
  const keyring = config.secretsKeyring ?? parseKeyring(await readOrCreateKeyFile(config.dataDir));
  const embedded = await startEmbeddedPostgres({ dataDir: config.dataDir, log: () => undefined });
  try {
    return await work({
      url: embedded.url,
      keyring,
      embeddedDataDir: config.secretsKeyring ? null : config.dataDir,
    });
  } finally {
    await embedded.stop();
  }
}
