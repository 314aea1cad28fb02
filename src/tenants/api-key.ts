import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * API keys look like `dl_<keyId>_<secret>`: the key id finds the row, the secret is checked
 * against its SHA-256. A slow password hash buys nothing here: the secret is 256 random bits.
 */
const PREFIX = 'dl';
const KEY_PATTERN = /^dl_([a-f0-9]{16})_([A-Za-z0-9_-]{43})$/;

export interface IssuedApiKey {
  apiKey: string;
  keyId: string;
  secretSha256: Buffer;
}

export interface ParsedApiKey {
  keyId: string;
  secret: string;
}

export function issueApiKey(): IssuedApiKey {
  const keyId = randomBytes(8).toString('hex');
  const secret = randomBytes(32).toString('base64url');
  return { apiKey: `${PREFIX}_${keyId}_${secret}`, keyId, secretSha256: sha256(secret) };
}

export function parseApiKey(apiKey: string): ParsedApiKey | null {
  const match = KEY_PATTERN.exec(apiKey);
  return match ? { keyId: match[1], secret: match[2] } : null;
}

/** The public id of a well-formed API key (what a revision records as who changed it). */
export function apiKeyIdOf(apiKey: string): string | null {
  return parseApiKey(apiKey)?.keyId ?? null;
}

/** Constant-time comparison of a presented secret against the stored digest. */
export function secretMatches(secret: string, storedSha256: Buffer): boolean {
  const presented = sha256(secret);
  return presented.length === storedSha256.length && timingSafeEqual(presented, storedSha256);
}

/** Constant-time comparison of two tokens of any length (e.g. the admin token). */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(expected));
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
