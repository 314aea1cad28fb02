import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Request signing for targets registered with a signing secret.
 *
 * Every signed request carries:
 *
 *   X-Dueline-Timestamp: <unix seconds>
 *   X-Dueline-Signature: v1=<hex HMAC-SHA256(secret, "<timestamp>.<raw body>")>
 *
 * A receiver recomputes the HMAC over the raw body bytes exactly as received (before any JSON
 * parsing), compares in constant time, and rejects timestamps too far from its own clock so a
 * captured request cannot be replayed later. The header may hold several comma-separated
 * `v1=` values (for example while a secret is being rotated); any one matching is enough. The
 * `v1` prefix lets the scheme change later without breaking receivers that check the version.
 */

export const TIMESTAMP_HEADER = 'X-Dueline-Timestamp';
export const SIGNATURE_HEADER = 'X-Dueline-Signature';
export const SIGNATURE_VERSION = 'v1';
export const DEFAULT_SIGNATURE_TOLERANCE_SECONDS = 300;

/** Hex HMAC-SHA256 of `${timestamp}.${body}` keyed with `secret` (strings hashed as UTF-8). */
export function signBody(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

/** The X-Dueline-Signature header value: `v1=<hex>`. */
export function signatureHeaderValue(secret: string, timestamp: string, body: string): string {
  return `${SIGNATURE_VERSION}=${signBody(secret, timestamp, body)}`;
}

export interface VerifyOptions {
  /** Maximum allowed clock difference; `Infinity` disables the replay check. Default 300. */
  toleranceSeconds?: number;
  /** Receiver's clock in epoch milliseconds. Default `Date.now()`. */
  nowMs?: number;
}

/**
 * Receiver-side check, for tests and as reference code for tenants. Returns false (never throws)
 * for a malformed header or timestamp, a stale timestamp, or a wrong signature.
 */
export function verifySignature(
  secret: string,
  timestamp: string,
  body: string,
  signatureHeader: string | undefined,
  options: VerifyOptions = {},
): boolean {
  if (!/^\d{1,15}$/.test(timestamp) || !signatureHeader) return false;
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const nowSeconds = (options.nowMs ?? Date.now()) / 1000;
  if (Math.abs(nowSeconds - Number(timestamp)) > tolerance) return false;

  const expected = Buffer.from(signBody(secret, timestamp, body), 'hex');
  let matched = false;
  for (const part of signatureHeader.split(',')) {
    const [version, value] = part.trim().split('=', 2);
    if (version !== SIGNATURE_VERSION || !value || !/^[0-9a-fA-F]{64}$/.test(value)) continue;
    // Keep comparing after a match so timing does not reveal which entry matched.
    matched = timingSafeEqual(expected, Buffer.from(value, 'hex')) || matched;
  }
  return matched;
}
