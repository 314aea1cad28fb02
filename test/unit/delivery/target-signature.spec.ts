import { createHmac } from 'node:crypto';
import {
  signBody,
  signatureHeaderValue,
  verifySignature,
} from '../../../src/delivery/target-signature';

describe('target signature', () => {
  const secret = 'whsec_test';
  const timestamp = '1700000000';
  const body = '{"hello":"wörld"}';
  const nowMs = 1_700_000_010_000;

  it('is hex HMAC-SHA256 over "<timestamp>.<body>"', () => {
    const expected = createHmac('sha256', secret)
      .update(Buffer.from(`${timestamp}.${body}`, 'utf8'))
      .digest('hex');
    expect(signBody(secret, timestamp, body)).toBe(expected);
    expect(signatureHeaderValue(secret, timestamp, body)).toBe(`v1=${expected}`);
  });

  it('verifies a valid signature', () => {
    const header = signatureHeaderValue(secret, timestamp, body);
    expect(verifySignature(secret, timestamp, body, header, { nowMs })).toBe(true);
  });

  it('accepts any matching entry of a comma-separated list (secret rotation)', () => {
    const header = `v1=${'0'.repeat(64)}, ${signatureHeaderValue(secret, timestamp, body)}`;
    expect(verifySignature(secret, timestamp, body, header, { nowMs })).toBe(true);
  });

  it.each([
    ['tampered body', secret, timestamp, '{"hello":"world"}', undefined],
    ['wrong secret', 'other', timestamp, body, undefined],
    ['different timestamp', secret, '1700000001', body, undefined],
    ['missing header', secret, timestamp, body, ''],
    ['unknown version', secret, timestamp, body, `v0=${signBody(secret, timestamp, body)}`],
    ['truncated hex', secret, timestamp, body, `v1=${signBody(secret, timestamp, body).slice(2)}`],
    ['non-numeric timestamp', secret, 'abc', body, undefined],
  ])('rejects %s', (_label, verifySecret, verifyTimestamp, verifyBody, header) => {
    const signed = header ?? signatureHeaderValue(secret, timestamp, body);
    expect(verifySignature(verifySecret, verifyTimestamp, verifyBody, signed, { nowMs })).toBe(
      false,
    );
  });

  it('rejects a stale timestamp unless the tolerance is disabled', () => {
    const header = signatureHeaderValue(secret, timestamp, body);
    const later = nowMs + 301_000;
    expect(verifySignature(secret, timestamp, body, header, { nowMs: later })).toBe(false);
    expect(
      verifySignature(secret, timestamp, body, header, {
        nowMs: later,
        toleranceSeconds: Infinity,
      }),
    ).toBe(true);
  });
});
