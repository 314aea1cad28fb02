import { createHmac, randomBytes } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com), so receivers can verify calls
 * with an off-the-shelf library in their language instead of writing a verifier:
 *
 *   webhook-id:        the run id (the same on every attempt, so it deduplicates retries)
 *   webhook-timestamp: unix seconds
 *   webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<raw body>")>
 *
 * Several space-separated signatures are sent while a target's secrets rotate: any one that
 * verifies is enough, so a receiver can switch to the new secret at any time in the overlap.
 */

export const WEBHOOK_ID_HEADER = 'webhook-id';
export const WEBHOOK_TIMESTAMP_HEADER = 'webhook-timestamp';
export const WEBHOOK_SIGNATURE_HEADER = 'webhook-signature';

export const STANDARD_SECRET_PREFIX = 'whsec_';
/** The spec recommends keys of 24 to 64 bytes; we generate 32. */
export const MIN_SECRET_BYTES = 24;
export const MAX_SECRET_BYTES = 64;
const GENERATED_SECRET_BYTES = 32;

const STANDARD_SECRET_RE = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/**
 * Why `secret` is not a signing secret in the spec's form (`whsec_` + base64 of 24 to 64
 * random bytes), or null when it is. The reason never repeats the secret.
 */
export function standardSecretProblem(secret: string): string | null {
  const match = STANDARD_SECRET_RE.exec(secret);
  if (!match || match[1].length % 4 !== 0) {
    return 'must be "whsec_" followed by base64 (the Standard Webhooks secret format)';
  }
  const bytes = Buffer.from(match[1], 'base64').length;
  if (bytes < MIN_SECRET_BYTES || bytes > MAX_SECRET_BYTES) {
    return `must encode ${MIN_SECRET_BYTES} to ${MAX_SECRET_BYTES} bytes after "whsec_" (got ${bytes})`;
  }
  return null;
}

/** A new secret in the spec's form, from the OS's CSPRNG. */
export function generateStandardSecret(): string {
  return `${STANDARD_SECRET_PREFIX}${randomBytes(GENERATED_SECRET_BYTES).toString('base64')}`;
}

/**
 * The HMAC key a secret stands for: the decoded bytes of a `whsec_` secret, as every Standard
 * Webhooks library derives it. A secret registered before the format was required (any text)
 * signs with its UTF-8 bytes; its receiver verifies with the library's raw-key option.
 */
export function signingKeyBytes(secret: string): Buffer {
  const match = STANDARD_SECRET_RE.exec(secret);
  return match ? Buffer.from(match[1], 'base64') : Buffer.from(secret, 'utf8');
}

/** One `v1,<base64>` signature per secret, space-separated, in the order given. */
export function webhookSignatureValue(
  secrets: readonly string[],
  messageId: string,
  timestamp: string,
  body: string,
): string {
  return secrets
    .map((secret) => {
      const mac = createHmac('sha256', signingKeyBytes(secret))
        .update(`${messageId}.${timestamp}.${body}`, 'utf8')
        .digest('base64');
      return `v1,${mac}`;
    })
    .join(' ');
}
