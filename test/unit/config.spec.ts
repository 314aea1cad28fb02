import { availableParallelism } from 'node:os';
import { loadConfig } from '../../src/config';

describe('loadConfig', () => {
  const base = {
    DATABASE_URL: 'postgres://u@h/db',
    ADMIN_TOKEN: 'a'.repeat(16),
    SECRETS_KEY: Buffer.alloc(32, 1).toString('base64'),
  };

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
    expect([...config.targetAllowedHosts.names]).toEqual(['localhost']);
    expect([...config.targetAllowedHosts.ips]).toEqual(['10.0.0.5']);
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
    [{ DATABASE_URL: 'postgres://u@h/db', ADMIN_TOKEN: 'a'.repeat(16) }, 'SECRETS_KEY'],
    [{ SECRETS_KEY: 'too-short' }, 'SECRETS_KEY'],
    [{ SECRETS_KEY: `${Buffer.alloc(32).toString('base64')},${'b'.repeat(40)}` }, 'SECRETS_KEY'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ TARGET_ALLOWED_HOSTS: 'http://x' }, 'TARGET_ALLOWED_HOSTS'],
    [
      { EXECUTION_LEASE_MS: '1000', EXECUTION_HEARTBEAT_INTERVAL_MS: '900' },
      'EXECUTION_HEARTBEAT_INTERVAL_MS',
    ],
    [{ WORKER_CONCURRENCY: '10', WORKER_BATCH_SIZE: '20' }, 'WORKER_BATCH_SIZE'],
    [{ WORKER_POLLING_INTERVAL_MS: '100' }, 'WORKER_POLLING_INTERVAL_MS'],
    [{ RELAY_INTERVAL_MS: 'soon' }, 'RELAY_INTERVAL_MS'],
    [{ WORKER_PROCESSES: '-1' }, 'WORKER_PROCESSES'],
    [{ WORKER_PROCESSES: '65' }, 'WORKER_PROCESSES'],
    [{ HEAP_GROWTH_PERCENT: '-1' }, 'HEAP_GROWTH_PERCENT'],
    [{ HEAP_GROWTH_PERCENT: '1001' }, 'HEAP_GROWTH_PERCENT'],
    [{ DATABASE_POOL_IDLE_SECONDS: '0' }, 'DATABASE_POOL_IDLE_SECONDS'],
  ])('fails fast with one line naming the variable: %p', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });

  it('reads the engine knobs into typed groups', () => {
    const config = loadConfig({
      EXECUTION_LEASE_MS: '4000',
      EXECUTION_HEARTBEAT_INTERVAL_MS: '1000',
      WORKER_CONCURRENCY: '50',
      WORKER_BATCH_SIZE: '25',
      RELAY_SWEEP_INTERVAL_MS: '250',
      QUEUE_POOL_SIZE: '4',
      DATABASE_POOL_SIZE: '8',
    });
    expect(config.execution).toMatchObject({ leaseMs: 4000, heartbeatIntervalMs: 1000 });
    expect(config.worker).toMatchObject({ concurrency: 50, batchSize: 25 });
    expect(config.relay.sweepIntervalMs).toBe(250);
    expect(config.queue.poolSize).toBe(4);
    expect(config.database.poolSize).toBe(8);
  });

  it('forks one worker process per core but one by default; 0 keeps the worker in-process', () => {
    expect(loadConfig({}).worker.processes).toBe(Math.max(1, availableParallelism() - 1));
    expect(loadConfig({ WORKER_PROCESSES: '0' }).worker.processes).toBe(0);
    expect(loadConfig({ WORKER_PROCESSES: '3' }).worker.processes).toBe(3);
  });

  it('bounds heap growth between full collections at 50 % by default; 0 leaves V8 its own', () => {
    expect(loadConfig({}).heapGrowthPercent).toBe(50);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '0' }).heapGrowthPercent).toBe(0);
    expect(loadConfig({ HEAP_GROWTH_PERCENT: '200' }).heapGrowthPercent).toBe(200);
  });

  it("keeps an idle pooled connection five minutes by default, past the next minute's burst", () => {
    expect(loadConfig({}).database.poolIdleMs).toBe(300_000);
    expect(loadConfig({ DATABASE_POOL_IDLE_SECONDS: '30' }).database.poolIdleMs).toBe(30_000);
  });

  it('is frozen: nothing can change it after boot', () => {
    const config = loadConfig({});
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.execution)).toBe(true);
    expect(() => {
      (config.execution as { leaseMs: number }).leaseMs = 1;
    }).toThrow(TypeError);
  });
});
