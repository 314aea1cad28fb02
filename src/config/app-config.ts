import { InvalidConfigError } from './invalid-config.error';

export const ROLE_NAMES = ['api', 'poller', 'relay', 'worker'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The whole process configuration, validated once at boot. Nothing else reads process.env. */
export interface AppConfig {
  port: number;
  /** Unset: an embedded Postgres is started under dataDir and its URL filled in at boot. */
  databaseUrl: string | null;
  dataDir: string;
  roles: ReadonlySet<RoleName>;
  /** Unset with DATABASE_URL is an error; in embedded mode one is generated and kept in dataDir. */
  adminToken: string | null;
  targetAllowedHosts: string | undefined;
  logLevel: LogLevel;
  /** Per-tenant management API rate limit (per replica): sustained rate and burst. */
  managementRatePerSecond: number;
  managementBurst: number;
  /** Poller: shard lease period (renewed every third of it) and due entries per transaction. */
  pollerLeaseSeconds: number;
  pollerBatchSize: number;
  /** How far ahead of an instant the poller prepares its batch (0: only once due). */
  pollerLookaheadMs: number;
  /** Upper bound on a graceful shutdown before the process gives up waiting for in-flight work. */
  shutdownTimeoutMs: number;
}

export type Env = Record<string, string | undefined>;

const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * Reads and validates the environment. Throws InvalidConfigError naming the first bad variable,
 * so a misconfigured replica fails at boot with one clear line instead of misbehaving later.
 */
export function loadConfig(env: Env): AppConfig {
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new InvalidConfigError('DATABASE_URL', 'must be a postgres:// or postgresql:// URL');
  }
  const adminToken = optional(env, 'ADMIN_TOKEN');
  if (adminToken !== null && adminToken.length < MIN_ADMIN_TOKEN_LENGTH) {
    throw new InvalidConfigError(
      'ADMIN_TOKEN',
      `must be at least ${MIN_ADMIN_TOKEN_LENGTH} characters`,
    );
  }
  if (databaseUrl !== null && adminToken === null) {
    throw new InvalidConfigError('ADMIN_TOKEN', 'is required when DATABASE_URL is set');
  }
  return {
    port: integer(env, 'PORT', 3000, 0, 65535),
    databaseUrl,
    dataDir: optional(env, 'DATA_DIR') ?? './.data',
    roles: roles(env),
    adminToken,
    targetAllowedHosts: optional(env, 'TARGET_ALLOWED_HOSTS') ?? undefined,
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownTimeoutMs: integer(env, 'SHUTDOWN_TIMEOUT_MS', 15000, 0, 600000),
    managementRatePerSecond: integer(env, 'MANAGEMENT_RATE_PER_SECOND', 20, 1, 100000),
    managementBurst: integer(env, 'MANAGEMENT_BURST', 100, 1, 100000),
    pollerLeaseSeconds: integer(env, 'POLLER_LEASE_SECONDS', 10, 1, 600),
    pollerBatchSize: integer(env, 'POLLER_BATCH_SIZE', 500, 1, 10000),
    pollerLookaheadMs: integer(env, 'POLLER_LOOKAHEAD_MS', 100, 0, 1000),
  };
}

function optional(env: Env, name: string): string | null {
  const value = env[name]?.trim();
  return value ? value : null;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new InvalidConfigError(name, `must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new InvalidConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

function roles(env: Env): ReadonlySet<RoleName> {
  const raw = optional(env, 'ROLES');
  if (raw === null) return new Set(ROLE_NAMES);
  const names = raw
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  const unknown = names.filter((name) => !(ROLE_NAMES as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new InvalidConfigError(
      'ROLES',
      `must be a comma-separated subset of ${ROLE_NAMES.join(',')}, got "${raw}"`,
    );
  }
  return new Set(names as RoleName[]);
}
