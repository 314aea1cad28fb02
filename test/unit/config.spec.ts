import { loadConfig } from '../../src/config/app-config';

describe('loadConfig', () => {
  const base = { DATABASE_URL: 'postgres://u@h/db', ADMIN_TOKEN: 'a'.repeat(16) };

  it('applies defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 3000,
      databaseUrl: null,
      dataDir: './.data',
      adminToken: null,
      logLevel: 'info',
    });
    expect([...config.roles]).toEqual(['api', 'poller', 'relay', 'worker']);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      ...base,
      PORT: '8080',
      DATA_DIR: '/var/lib/dueline',
      ROLES: 'worker, poller',
      TARGET_ALLOWED_HOSTS: 'localhost,10.0.0.5',
      LOG_LEVEL: 'debug',
    });
    expect(config.port).toBe(8080);
    expect([...config.roles]).toEqual(['worker', 'poller']);
    expect(config.targetAllowedHosts).toBe('localhost,10.0.0.5');
    expect(config.logLevel).toBe('debug');
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ ROLES: 'api,scheduler' }, 'ROLES'],
    [{ ROLES: ' , ' }, 'ROLES'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://u@h/db' }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
  ])('fails fast with one line naming the variable: %p', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });
});
