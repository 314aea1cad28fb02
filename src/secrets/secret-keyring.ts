import { createHash, randomBytes } from 'node:crypto';

/** AES-256: every key is 32 bytes, given as base64. */
export const SECRET_KEY_BYTES = 32;

export interface SecretKey {
  /** Derived from the key itself, so it names the key without revealing it. */
  readonly id: string;
  readonly key: Buffer;
}

/**
 * The keys secrets at rest are sealed with: the first seals, every one opens (so values sealed
 * under an older key stay readable until `npm run secrets:rotate-key` re-seals them).
 */
export interface SecretKeyring {
  readonly current: SecretKey;
  readonly all: ReadonlyMap<string, SecretKey>;
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update('dueline-secrets-key:').update(key).digest('hex').slice(0, 16);
}

/**
 * Reads SECRETS_KEY (or the DATA_DIR key file): base64 keys of 32 bytes separated by commas,
 * whitespace or newlines, the current one first. Throws an Error whose message names the
 * problem and never the key.
 */
export function parseKeyring(text: string): SecretKeyring {
  const entries = text
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new Error('holds no key');
  const keys = entries.map((entry, i) => {
    const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(entry) ? Buffer.from(entry, 'base64') : null;
    if (!key || key.length !== SECRET_KEY_BYTES) {
      throw new Error(
        `key ${i + 1} must be ${SECRET_KEY_BYTES} bytes in base64 (e.g. from \`openssl rand -base64 32\`)`,
      );
    }
    return { id: keyIdOf(key), key };
  });
  return { current: keys[0], all: new Map(keys.map((k) => [k.id, k])) };
}

/** A new key, as SECRETS_KEY takes it. */
export function generateKeyText(): string {
  return randomBytes(SECRET_KEY_BYTES).toString('base64');
}

/** The keyring's text with a new current key in front (for a rotation). */
export function withNewCurrentKey(text: string): string {
  return [generateKeyText(), ...text.split(/[\s,]+/).filter(Boolean)].join('\n') + '\n';
}

/** The keyring as SECRETS_KEY text (the current key first), e.g. for a child process's env. */
export function keyringText(keyring: SecretKeyring): string {
  const others = [...keyring.all.values()].filter((key) => key.id !== keyring.current.id);
  return [keyring.current, ...others].map((key) => key.key.toString('base64')).join(',');
}
