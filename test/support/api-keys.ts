import { parseApiKey } from '../../src/tenants/api-key';

/**
 * The two parts of an issued API key. The secret is base64url and may itself hold '_', so
 * splitting the key on '_' can cut it short, or (when it starts with '_') yield '' — which every
 * string "contains", so a no-leak assertion on it would fail by chance.
 */
export function apiKeyParts(apiKey: string): { keyId: string; secret: string } {
  const parsed = parseApiKey(apiKey);
  if (!parsed) throw new Error('not a well-formed API key');
  return parsed;
}
