import { InvalidDatabaseUrlError, parseDatabaseUrl, urlFor } from '../../../src/database';

describe('parseDatabaseUrl (libpq multi-host URI)', () => {
  it('reads several hosts, each with its port or the default', () => {
    const address = parseDatabaseUrl(
      'postgres://dueline:s%40cret@h1:5433,h2,[::1]:6000/app?target_session_attrs=read-write&sslmode=require',
    );
    expect(address.hosts).toEqual([
      { host: 'h1', port: 5433 },
      { host: 'h2', port: 5432 },
      { host: '::1', port: 6000 },
    ]);
    // Each host gets a single-host URL pg understands, with the credentials and the other
    // parameters, without target_session_attrs (pg does not know it).
    expect(urlFor(address, address.hosts[1])).toBe(
      'postgres://dueline:s%40cret@h2:5432/app?sslmode=require',
    );
    expect(urlFor(address, address.hosts[2])).toBe(
      'postgres://dueline:s%40cret@[::1]:6000/app?sslmode=require',
    );
  });

  it('keeps a single-host URL as it was', () => {
    const address = parseDatabaseUrl('postgresql://u@127.0.0.1:5432/db');
    expect(address.hosts).toEqual([{ host: '127.0.0.1', port: 5432 }]);
    expect(urlFor(address, address.hosts[0])).toBe('postgresql://u@127.0.0.1:5432/db');
  });

  it('carries a socket directory (a host starting with "/", percent-encoded) through', () => {
    const address = parseDatabaseUrl('postgres://u@%2Fvar%2Frun%2Fpostgresql:5433/db');
    expect(address.hosts).toEqual([{ host: '/var/run/postgresql', port: 5433 }]);
    expect(urlFor(address, address.hosts[0])).toBe(
      'postgres://u@%2Fvar%2Frun%2Fpostgresql:5433/db',
    );
  });

  it.each(['any', 'read-write', 'primary'])('accepts target_session_attrs=%s', (attrs) => {
    expect(parseDatabaseUrl(`postgres://a,b/db?target_session_attrs=${attrs}`).hosts).toHaveLength(
      2,
    );
  });

  it.each([
    ['postgres://a,b/db?target_session_attrs=read-only', /target_session_attrs=read-only/],
    ['postgres://a,b/db?target_session_attrs=standby', /standby/],
    ['postgres://a:99999/db', /invalid port/],
    ['postgres://a,/db', /at least one host/],
    ['mysql://a/db', /postgres:\/\//],
  ])('refuses %s', (url, message) => {
    expect(() => parseDatabaseUrl(url)).toThrow(InvalidDatabaseUrlError);
    expect(() => parseDatabaseUrl(url)).toThrow(message);
  });
});
