import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { generateKeyText } from './secret-keyring';

/** Where embedded mode keeps its secrets key (the current first, one per line). */
export function keyFilePath(dataDir: string): string {
  return join(resolve(dataDir), 'secrets-key');
}

/**
 * Embedded mode without SECRETS_KEY: the key generated on the first start, kept beside the
 * cluster (mode 0600) and read on every later one.
 */
export async function readOrCreateKeyFile(dataDir: string): Promise<string> {
  const path = keyFilePath(dataDir);
  if (existsSync(path)) return readFile(path, 'utf8');
  await mkdir(resolve(dataDir), { recursive: true });
  const text = `${generateKeyText()}\n`;
  await writeFile(path, text, { mode: 0o600, flag: 'wx' });
  return text;
}

export async function writeKeyFile(dataDir: string, text: string): Promise<void> {
  await writeFile(keyFilePath(dataDir), text, { mode: 0o600 });
}
