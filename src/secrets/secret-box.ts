import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { SecretKeyring } from './secret-keyring';

/**
 * What a sealed value is for. It is authenticated with the value (AES-GCM's additional data),
 * so a ciphertext copied into another column does not open there.
 */
export type SecretPurpose = 'target.signing_secret' | 'target.auth' | 'signing_key.private_key';

const PREFIX = 'enc:v1:';
const IV_BYTES = 12;

/**
 * AES-256-GCM for secrets at rest. A sealed value is text:
 *
 *   enc:v1:<key id>:<iv>:<ciphertext>:<tag>   (base64url parts)
 *
 * so each value names the key that sealed it, a rotation can re-seal value by value, and a
 * reader with the old and the new key reads both while it runs.
 */
export class SecretBox {
  constructor(private readonly keyring: SecretKeyring) {}

  get currentKeyId(): string {
    return this.keyring.current.id;
  }

  seal(plain: string, purpose: SecretPurpose): string {
    const { id, key } = this.keyring.current;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(Buffer.from(purpose, 'utf8'));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${PREFIX}${id}:${b64(iv)}:${b64(data)}:${b64(cipher.getAuthTag())}`;
  }

  /** Throws (without the value in the message) when it is not sealed or its key is unknown. */
  open(sealed: string, purpose: SecretPurpose): string {
    const parts = isSealed(sealed) ? sealed.slice(PREFIX.length).split(':') : [];
    if (parts.length !== 4) throw new Error(`a ${purpose} value is not sealed`);
    const [keyId, iv, data, tag] = parts;
    const key = this.keyring.all.get(keyId);
    if (!key) {
      throw new Error(
        `a ${purpose} value is sealed under key ${keyId}, which SECRETS_KEY does not hold`,
      );
    }
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(purpose, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    try {
      return Buffer.concat([
        decipher.update(Buffer.from(data, 'base64url')),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new Error(
        `a ${purpose} value does not open under key ${keyId} (tampered or misplaced)`,
      );
    }
  }

  /** Sealed under a key other than the current one: a rotation must re-seal it. */
  isStale(sealed: string): boolean {
    return !sealed.startsWith(`${PREFIX}${this.keyring.current.id}:`);
  }
}

export function isSealed(value: string): boolean {
  return value.startsWith(PREFIX);
}

function b64(bytes: Buffer): string {
  return bytes.toString('base64url');
}
