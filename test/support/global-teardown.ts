import { rmSync } from 'node:fs';
import { adminQuery, SERVER_URL_ENV, TEMPLATE_ENV } from './test-postgres';

export default async function globalTeardown(): Promise<void> {
  const serverUrl = process.env[SERVER_URL_ENV];
  const template = process.env[TEMPLATE_ENV];
  if (serverUrl && template) {
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(
      () => undefined,
    );
  }
  const embedded = (globalThis as Record<string, unknown>).__duelineEmbedded as
    { stop(): Promise<void>; dataDir: string } | undefined;
  if (embedded) {
    await embedded.stop();
    rmSync(embedded.dataDir, { recursive: true, force: true });
  }
}
