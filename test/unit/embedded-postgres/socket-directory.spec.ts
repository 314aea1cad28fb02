import { socketDirectoryFor } from '../../../src/embedded-postgres/socket-directory';

describe('socketDirectoryFor', () => {
  it('puts the socket in the cluster directory', () => {
    expect(socketDirectoryFor('/var/lib/dueline/pg', 21650)).toBe('/var/lib/dueline/pg');
  });

  it('keeps to TCP when the socket path would pass 107 bytes, and uses it up to there', () => {
    // "/.s.PGSQL.21650" is 15 bytes: a 92-byte directory makes a 107-byte path, 93 one too many.
    const longest = '/' + 'd'.repeat(91);
    expect(socketDirectoryFor(longest, 21650)).toBe(longest);
    expect(socketDirectoryFor(longest + 'd', 21650)).toBeNull();
  });

  // Anything outside letters, digits and _ . - / is left to TCP, not only what needs quoting.
  it.each([
    ['a comma', '/srv/a,b/pg'],
    ['a space', '/srv/my data/pg'],
    ['a double quote', '/srv/"x"/pg'],
    ['a percent sign', '/srv/100%/pg'],
    ['a relative path', 'data/pg'],
  ])('keeps to TCP for a directory with %s', (_, dir) => {
    expect(socketDirectoryFor(dir, 5432)).toBeNull();
  });
});
