import { decodeTargetCursor, encodeTargetCursor } from '../../../src/targets/target-cursor';

describe('target list cursor', () => {
  const id = '0193f7a1-2b3c-4d5e-8f90-a1b2c3d4e5f6';

  it.each([
    '2027-01-01T09:00:00.123456Z',
    '2024-02-29T23:59:59.999999Z',
    '1970-01-01T00:00:00.000000Z',
  ])('round-trips %s with full microsecond precision', (createdAt) => {
    const encoded = encodeTargetCursor({ createdAt, id });
    expect(encoded).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeTargetCursor(encoded)).toEqual({ createdAt, id });
  });

  const encode = (text: string) => Buffer.from(text).toString('base64url');

  it.each([
    ['empty', ''],
    ['not base64url', 'abc+/=='],
    ['with spaces', 'abc def'],
    ['too long', 'A'.repeat(201)],
    ['garbage', encode('garbage')],
    ['milliseconds only', encode(`2027-01-01T09:00:00.123Z|${id}`)],
    ['no zone', encode(`2027-01-01T09:00:00.123456|${id}`)],
    ['an impossible date', encode(`2027-02-30T09:00:00.123456Z|${id}`)],
    ['an impossible time', encode(`2027-01-01T24:00:00.000000Z|${id}`)],
    ['a malformed id', encode('2027-01-01T09:00:00.123456Z|not-a-uuid')],
    ['a trailing extra', encode(`2027-01-01T09:00:00.123456Z|${id}|x`)],
    ['an upper-case id', encode(`2027-01-01T09:00:00.123456Z|${id.toUpperCase()}`)],
  ])('refuses %s', (_label, encoded) => {
    expect(decodeTargetCursor(encoded)).toBeNull();
  });
});
