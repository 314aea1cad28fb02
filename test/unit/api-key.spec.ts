import { issueApiKey, parseApiKey, secretMatches, tokensEqual } from '../../src/tenants/api-key';

describe('API keys', () => {
  it('issues keys that parse back and match their stored digest only', () => {
    const issued = issueApiKey();
    const parsed = parseApiKey(issued.apiKey);
    expect(parsed?.keyId).toBe(issued.keyId);
    expect(secretMatches(parsed!.secret, issued.secretSha256)).toBe(true);
    const other = issueApiKey();
    expect(secretMatches(parseApiKey(other.apiKey)!.secret, issued.secretSha256)).toBe(false);
  });

  it('never issues the same key twice', () => {
    const keys = new Set(Array.from({ length: 200 }, () => issueApiKey().apiKey));
    expect(keys.size).toBe(200);
  });

  it.each(['', 'dl_', 'dl_zz_abc', 'Bearer x', 'dl_0123456789abcdef_short'])(
    'rejects %p',
    (key) => {
      expect(parseApiKey(key)).toBeNull();
    },
  );

  it('compares tokens of different lengths without throwing', () => {
    expect(tokensEqual('a', 'a')).toBe(true);
    expect(tokensEqual('a', 'ab')).toBe(false);
  });
});
