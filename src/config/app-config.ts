import { availableParallelism } from 'node:os';
import {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_POOL_IDLE_MS,
  DEFAULT_PRIMARY_CHECK_INTERVAL_MS,
  InvalidDatabaseUrlError,
  parseDatabaseUrl,
} from '../database';
import {
  type AllowedHosts,
  DEFAULT_RESPONSE_HEADERS,
  parseAllowedHosts,
  responseHeaderProblem,
} from '../delivery';
import { parseKeyring, type SecretKeyring } from '../secrets';
import { InvalidConfigError } from './invalid-config.error';

export const ROLE_NAMES = ['api', 'poller', 'relay', 'worker'] as const;
export type RoleName = (typeof ROLE_NAMES)[number];

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** The per-tenant management API rate limit (per replica): sustained rate and burst. */
export interface ManagementConfig {
  ratePerSecond: number;
  burst: number;
}

export interface DatabaseConfig {
  /** Connections in this process's TypeORM pool. */
  poolSize: number;
  /** Bound on opening a connection, and on asking a server whether it takes writes. */
  connectTimeoutMs: number;
  /**
   * How long a pooled connection (ledger's and queue's) may sit idle before it is closed: longer
   * than the usual gap between two bursts of runs (a minute), so the next burst finds its
   * connections open, with their caches and prepared statements' plans, instead of opening them.
   */
  poolIdleMs: number;
  /** How often the server in use is asked whether it is still the writable one. */
  primaryCheckIntervalMs: number;
}

export interface QueueConfig {
  /** Connections in this process's pg-boss pool. */
  poolSize: number;
  /** pg-boss re-deliveries of a run job whose worker died holding it (the claim decides). */
  jobRetryLimit: number;
  /**
   * How long pg-boss keeps a job that finished in pg-boss (deleteAfterSeconds), and how often
   * its maintenance deletes them (at least every minute, at most daily). A claimed run's job is
   * deleted at once by the worker; this bounds the others (refused, failed, a missed delete).
   */
  finishedJobRetentionSeconds: number;
  /**
   * Runs one queue job carries at most (runs published together: a dispatch batch, an admission
   * round). The worker fetches four times WORKER_BATCH_SIZE / runsPerJob jobs at once and claims
   * at most WORKER_BATCH_SIZE of their runs at a time.
   */
  runsPerJob: number;
}

export interface PollerConfig {
  /** Shard lease period (renewed every third of it). */
  leaseSeconds: number;
  /** Due entries per dispatch transaction. */
  batchSize: number;
  /** How far ahead of an instant the batch is prepared (0: only once due). */
  lookaheadMs: number;
  /**
   * Entries an instant needs for the crowded-instant lane to prepare it ahead, a batch of
   * `batchSize` in a transaction of its own (0: no lane; see CrowdedInstantLane).
   */
  crowdedInstantEntries: number;
}

/**
 * Leases and the pace of waiting runs, shared by the worker role and the worker contract. The
 * lease must outlast several heartbeats, so that one slow heartbeat does not lose it.
 */
export interface ExecutionConfig {
  /** How long a claim (and each heartbeat) holds a run. */
  leaseMs: number;
  /** How often a holder renews its lease and looks for a cancel request. */
  heartbeatIntervalMs: number;
  /** A throttled run's job comes back after this long, plus up to as much again in jitter. */
  throttledRetryMs: number;
}

/**
 * The built-in worker: attempts in flight per process (a fetch waits for room for a batch), jobs
 * fetched in batches of `batchSize` by `fetchLoops` loops; claims made at once in a process are
 * merged into one statement of up to `claimBatchSize` runs, completions that end together into
 * one transaction of up to `completionBatchSize`. One loop: a flood due at one instant is then
 * fetched and claimed whole rather than in two halves that queue for the same tenants' permit
 * locks (steady 200/s p99 ~95 ms against ~100-120 with two; the 10,000 burst ~13 % slower).
 */
export interface WorkerConfig {
  /**
   * Worker-role processes forked beside a process that runs the worker role with other roles
   * (WORKER_PROCESSES; default one per core but one): the primary then runs its other roles and
   * the pool runs the worker role, each child a whole worker with `concurrency` slots.
   * 0: the worker role runs in the process itself. Ignored when the worker role runs alone.
   */
  processes: number;
  concurrency: number;
  batchSize: number;
  fetchLoops: number;
  claimBatchSize: number;
  /**
   * Merged claim statements in flight at once per process (WORKER_CLAIMS_IN_FLIGHT): a run
   * handed off or fetched while a claim is in flight goes in a claim of its own beside it rather
   * than waiting for it, so a quiet tenant's run does not queue behind a flood's claim of up to
   * `claimBatchSize` runs, tens of milliseconds on a busy machine (measured on 2 cores, 1,000
   * quiet tenants beside two 10,000-run floods, 6 alternated runs each: their claim p50 26-37 ms
   * with 1, 22-27 ms with 3; their p99 within 100 ms and 2x alone in 2 runs with 1, 5 with 3).
   */
  claimsInFlight: number;
  completionBatchSize: number;
  /**
   * How long a worker's writes that nothing on a run's way to its target waits for (an attempt's
   * completion, the delete of a handed-off job whose runs are claimed) wait for others to share
   * their statement (WORKER_WRITE_LINGER_MS). No call is delayed, only the run's record and its
   * permit: lone runs ending a few milliseconds apart then cost one transaction, not one each.
   * 0 (the default) turns it off: two full benchmark runs with 10 ms had their 1,000-tenant
   * phase fall seconds behind, for a cause not yet known (bench/RESULTS.md, twenty-sixth session).
   */
  writeLingerMs: number;
  /** Queue poll intervals; NOTIFY wakes the worker sooner for new jobs. */
  pollingIntervalMs: number;
  notifyPollingIntervalMs: number;
  /** How often a completion is retried while the database is briefly unreachable. */
  completionRetries: number;
  completionRetryBaseMs: number;
  /**
   * Percent of `concurrency` kept for `high` runs: `normal` and `low` runs never take those
   * slots, so a fleet saturated by them still starts a `high` run as soon as it is admitted.
   */
  reservedHighSharePercent: number;
  /**
   * Runs the poller dispatches at their instant are handed to a worker beside it (a process of
   * the same service) instead of waiting for a queue fetch, when that worker has room: their
   * jobs are written as usual but held back from every fetch for this long, the worker's alone;
   * past it (the worker died, or could not start them) any worker fetches them (see handoff/).
   * 0: no handoff (WORKER_HANDOFF_GRACE_MS).
   */
  handoffGraceMs: number;
}

/**
 * Delivery of events to subscriptions (the worker role): a lane of its own, never the run
 * slots, with its own bounds per call, per target and per event.
 */
export interface EventsConfig {
  /** Deliveries in flight per worker process. */
  concurrency: number;
  /** At most this many deliveries to one target are claimed per round. */
  perTarget: number;
  /** How often the deliverer looks for due events (it also looks as soon as a slot frees). */
  intervalMs: number;
  /** Upper bound on one delivery call, whatever the target's own timeoutMs. */
  timeoutMs: number;
  /** Attempts per event and subscription before it is given up. */
  maxAttempts: number;
  /** Backoff between attempts: doubling from the first delay up to the longest. */
  retryInitialDelayMs: number;
  retryMaxDelayMs: number;
  /** Delivered and given-up events are pruned this long after they finished. */
  retentionSeconds: number;
}

/** What each attempt keeps of the target's answer (never the request's credentials). */
export interface AttemptRecordConfig {
  /** Response headers kept, lower-case (`location` always is; cookies never). */
  responseHeaders: readonly string[];
  /** The first bytes of the response body kept. */
  responseBodyBytes: number;
}

/** dueline's OIDC-style JWTs for targets (auth type `oidc`) and the rotation of their keys. */
export interface OidcConfig {
  /** The `iss` claim: where receivers find /.well-known/jwks.json. */
  issuer: string;
  tokenTtlSeconds: number;
  /** A signing key's life before a successor takes over. */
  rotationSeconds: number;
  /** A successor is in the JWKS this long before it signs (longer than receivers cache it). */
  publishAheadSeconds: number;
}

/**
 * OpenTelemetry traces: off unless the standard OTEL_* variables ask for them (an OTLP endpoint,
 * or OTEL_TRACES_EXPORTER=otlp); the exporter reads its own OTEL_EXPORTER_OTLP_* settings.
 */
export interface TracingConfig {
  enabled: boolean;
  serviceName: string;
}

/**
 * The admitter: how often it looks at the waiting lists, tenants and runs per round.
 * `fleetBacklog`: how many admitted `normal`/`low` runs may wait in the queue for a worker; at
 * that many the fleet counts as saturated, and further runs wait (`throttled_fleet`) until the
 * admitter hands the freed places to the waiting tenants in proportion to their weights.
 */
export interface AdmissionConfig {
  intervalMs: number;
  /**
   * The pause after a round that found no run waiting, until this process decides that one
   * waits (which wakes the admitter at once); a run made to wait elsewhere (another replica's
   * poller, a worker's refused claim) is found within it.
   */
  idleIntervalMs: number;
  /** A tenant held back by its rate alone is admitted in chunks of this many ms of it (0: none). */
  rateChunkMs: number;
  tenantsPerRound: number;
  batchSize: number;
  fleetBacklog: number;
}

export interface RelayConfig {
  /** The outbox repair and Idempotency-Key pruning round. */
  intervalMs: number;
  /** A QUEUED run's job is only presumed lost once the run is this old. */
  orphanMinAgeSeconds: number;
  repairBatchSize: number;
  /** A job `active` this long while its run is still QUEUED was fetched by a worker that died. */
  staleActiveJobSeconds: number;
  idempotencyPruneBatchSize: number;
  /** Days a finished bulk operation or backfill (with its items or instants) is kept. */
  finishedOperationRetentionDays: number;
  /** The lease sweeper: how often, expired leases per tenant per sweep, tenants per sweep. */
  sweepIntervalMs: number;
  sweepBatchSize: number;
  sweepTenantsPerTick: number;
  /** How often the relay moves running backfills on (creates the runs whose turn came). */
  backfillIntervalMs: number;
  /** How often the relay looks for schedules to auto-pause after consecutive failures. */
  autoPauseIntervalMs: number;
}

/**
 * Run history in time-range partitions (`history/`): the relay's maintenance creates the
 * partitions ahead and drops those older than the retention.
 */
export interface HistoryConfig {
  /** The width of a new partition (a change applies from the last existing upper bound on). */
  partitionMinutes: number;
  /** How many partitions of that width exist ahead of now. */
  partitionsAhead: number;
  maintenanceIntervalMs: number;
  /** No partition younger than this is dropped, whatever the tenants' retention. */
  retentionFloorDays: number;
  /** For benchmarks and tests only: replaces every tenant's retention and the floor. */
  retentionOverrideMinutes: number | null;
}

/**
 * The whole process configuration, validated once at boot and frozen. Nothing else reads
 * process.env; every knob is documented in .env.example. Tests start the app with overrides.
 */
export interface AppConfig {
  port: number;
  /** Unset: an embedded Postgres is started under dataDir and its URL filled in at boot. */
  databaseUrl: string | null;
  dataDir: string;
  roles: ReadonlySet<RoleName>;
  /** Unset with DATABASE_URL is an error; in embedded mode one is generated and kept in dataDir. */
  adminToken: string | null;
  /**
   * The keys secrets at rest are sealed with (SECRETS_KEY, the current one first). Unset with
   * DATABASE_URL is an error; in embedded mode one is generated and kept in dataDir.
   */
  secretsKeyring: SecretKeyring | null;
  /** Loopback, private or link-local hosts that targets may use anyway (TARGET_ALLOWED_HOSTS). */
  targetAllowedHosts: AllowedHosts;
  logLevel: LogLevel;
  /** Upper bound on a graceful shutdown before the process gives up waiting for in-flight work. */
  shutdownTimeoutMs: number;
  /** A request not answered within this gets a 503 with Retry-After (never an unbounded hang). */
  requestTimeoutMs: number;
  /**
   * How far, in per cent, each process's JavaScript heap may grow past what survived its last
   * full collection before the next one (HEAP_GROWTH_PERCENT; 0: V8's own, which lets a busy
   * process's heap grow to several times its live data). See common/runtime/heap-growth.ts.
   */
  heapGrowthPercent: number;
  management: ManagementConfig;
  database: DatabaseConfig;
  queue: QueueConfig;
  poller: PollerConfig;
  execution: ExecutionConfig;
  worker: WorkerConfig;
  relay: RelayConfig;
  history: HistoryConfig;
  admission: AdmissionConfig;
  attemptRecord: AttemptRecordConfig;
  events: EventsConfig;
  oidc: OidcConfig;
  tracing: TracingConfig;
}

export type Env = Record<string, string | undefined>;

const MIN_ADMIN_TOKEN_LENGTH = 16;

/**
 * Reads and validates the environment. Throws InvalidConfigError naming the first bad variable,
 * so a misconfigured replica fails at boot with one clear line instead of misbehaving later.
 */
export function loadConfig(env: Env): AppConfig {
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl !== null) {
    try {
      parseDatabaseUrl(databaseUrl);
    } catch (error) {
      if (!(error instanceof InvalidDatabaseUrlError)) throw error;
      throw new InvalidConfigError('DATABASE_URL', error.message);
    }
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
  const secretsKeyring = keyring(env);
  if (databaseUrl !== null && secretsKeyring === null) {
    throw new InvalidConfigError(
      'SECRETS_KEY',
      'is required when DATABASE_URL is set (32 bytes in base64, e.g. `openssl rand -base64 32`)',
    );
  }
  const int = (name: string, fallback: number, min: number, max: number) =>
    integer(env, name, fallback, min, max);
  const execution: ExecutionConfig = {
    leaseMs: int('EXECUTION_LEASE_MS', 30_000, 500, 3_600_000),
    heartbeatIntervalMs: int('EXECUTION_HEARTBEAT_INTERVAL_MS', 5_000, 50, 600_000),
    throttledRetryMs: int('EXECUTION_THROTTLED_RETRY_MS', 1_000, 10, 60_000),
  };
  if (execution.heartbeatIntervalMs * 2 > execution.leaseMs) {
    throw new InvalidConfigError(
      'EXECUTION_HEARTBEAT_INTERVAL_MS',
      `must be at most half of EXECUTION_LEASE_MS (${execution.leaseMs}), so one slow heartbeat does not lose the lease`,
    );
  }
  const worker: WorkerConfig = {
    processes: int('WORKER_PROCESSES', defaultWorkerProcesses(), 0, 64),
    concurrency: int('WORKER_CONCURRENCY', 600, 1, 100_000),
    batchSize: int('WORKER_BATCH_SIZE', 200, 1, 10_000),
    fetchLoops: int('WORKER_FETCH_LOOPS', 1, 1, 64),
    claimBatchSize: int('WORKER_CLAIM_BATCH_SIZE', 200, 1, 10_000),
    claimsInFlight: int('WORKER_CLAIMS_IN_FLIGHT', 3, 1, 16),
    completionBatchSize: int('WORKER_COMPLETION_BATCH_SIZE', 100, 1, 10_000),
    writeLingerMs: int('WORKER_WRITE_LINGER_MS', 0, 0, 1_000),
    // pg-boss polls at most every 0.5 s.
    pollingIntervalMs: int('WORKER_POLLING_INTERVAL_MS', 500, 500, 60_000),
    notifyPollingIntervalMs: int('WORKER_NOTIFY_POLLING_INTERVAL_MS', 2_000, 500, 600_000),
    completionRetries: int('WORKER_COMPLETION_RETRIES', 6, 0, 100),
    completionRetryBaseMs: int('WORKER_COMPLETION_RETRY_BASE_MS', 200, 1, 60_000),
    reservedHighSharePercent: int('WORKER_RESERVED_HIGH_SHARE', 20, 0, 90),
    handoffGraceMs: int('WORKER_HANDOFF_GRACE_MS', 2_000, 0, 60_000),
  };
  if (worker.batchSize > worker.concurrency) {
    throw new InvalidConfigError(
      'WORKER_BATCH_SIZE',
      `must not exceed WORKER_CONCURRENCY (${worker.concurrency})`,
    );
  }
  const port = int('PORT', 3000, 0, 65535);
  const oidc: OidcConfig = {
    issuer: issuer(env, port),
    tokenTtlSeconds: int('OIDC_TOKEN_TTL_SECONDS', 300, 30, 3600),
    rotationSeconds: int('OIDC_KEY_ROTATION_DAYS', 30, 1, 365) * 86_400,
    publishAheadSeconds: int('OIDC_KEY_PUBLISH_AHEAD_SECONDS', 3600, 0, 86_400),
  };
  if (oidc.publishAheadSeconds >= oidc.rotationSeconds) {
    throw new InvalidConfigError(
      'OIDC_KEY_PUBLISH_AHEAD_SECONDS',
      'must be shorter than OIDC_KEY_ROTATION_DAYS',
    );
  }
  return deepFreeze({
    port,
    databaseUrl,
    dataDir: optional(env, 'DATA_DIR') ?? './.data',
    roles: roles(env),
    adminToken,
    secretsKeyring,
    targetAllowedHosts: allowedHosts(env),
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    shutdownTimeoutMs: int('SHUTDOWN_TIMEOUT_MS', 15000, 0, 600000),
    requestTimeoutMs: int('REQUEST_TIMEOUT_MS', 10_000, 100, 600_000),
    heapGrowthPercent: int('HEAP_GROWTH_PERCENT', 50, 0, 1000),
    management: {
      ratePerSecond: int('MANAGEMENT_RATE_PER_SECOND', 20, 1, 100000),
      burst: int('MANAGEMENT_BURST', 100, 1, 100000),
    },
    database: {
      poolSize: int('DATABASE_POOL_SIZE', 20, 2, 1000),
      connectTimeoutMs: int(
        'DATABASE_CONNECT_TIMEOUT_MS',
        DEFAULT_CONNECT_TIMEOUT_MS,
        100,
        120_000,
      ),
      poolIdleMs: int('DATABASE_POOL_IDLE_SECONDS', DEFAULT_POOL_IDLE_MS / 1000, 1, 86_400) * 1000,
      primaryCheckIntervalMs: int(
        'DATABASE_PRIMARY_CHECK_INTERVAL_MS',
        DEFAULT_PRIMARY_CHECK_INTERVAL_MS,
        100,
        60_000,
      ),
    },
    queue: {
      poolSize: int('QUEUE_POOL_SIZE', 10, 2, 1000),
      jobRetryLimit: int('QUEUE_JOB_RETRY_LIMIT', 2, 0, 100),
      finishedJobRetentionSeconds: int('QUEUE_FINISHED_JOB_RETENTION_SECONDS', 3600, 1, 604_800),
      runsPerJob: int('QUEUE_RUNS_PER_JOB', 20, 1, 1000),
    },
    poller: {
      leaseSeconds: int('POLLER_LEASE_SECONDS', 10, 1, 600),
      batchSize: int('POLLER_BATCH_SIZE', 500, 1, 10000),
      lookaheadMs: int('POLLER_LOOKAHEAD_MS', 100, 0, 1000),
      crowdedInstantEntries: int('POLLER_CROWDED_INSTANT_ENTRIES', 100, 0, 100_000),
    },
    execution,
    worker,
    relay: {
      intervalMs: int('RELAY_INTERVAL_MS', 5_000, 10, 600_000),
      orphanMinAgeSeconds: int('RELAY_ORPHAN_MIN_AGE_SECONDS', 30, 0, 86_400),
      repairBatchSize: int('RELAY_REPAIR_BATCH_SIZE', 200, 1, 100_000),
      staleActiveJobSeconds: int('RELAY_STALE_ACTIVE_JOB_SECONDS', 60, 1, 86_400),
      idempotencyPruneBatchSize: int('RELAY_IDEMPOTENCY_PRUNE_BATCH_SIZE', 1000, 1, 100_000),
      finishedOperationRetentionDays: int('RELAY_FINISHED_OPERATION_RETENTION_DAYS', 30, 1, 400),
      sweepIntervalMs: int('RELAY_SWEEP_INTERVAL_MS', 1_000, 10, 600_000),
      sweepBatchSize: int('RELAY_SWEEP_BATCH_SIZE', 100, 1, 100_000),
      sweepTenantsPerTick: int('RELAY_SWEEP_TENANTS_PER_TICK', 20, 1, 10_000),
      backfillIntervalMs: int('RELAY_BACKFILL_INTERVAL_MS', 1_000, 10, 600_000),
      autoPauseIntervalMs: int('RELAY_AUTO_PAUSE_INTERVAL_MS', 1_000, 10, 600_000),
    },
    history: {
      partitionMinutes: int('HISTORY_PARTITION_MINUTES', 1440, 1, 44_640),
      partitionsAhead: int('HISTORY_PARTITIONS_AHEAD', 3, 1, 1000),
      maintenanceIntervalMs: int('HISTORY_MAINTENANCE_INTERVAL_MS', 60_000, 100, 3_600_000),
      retentionFloorDays: int('HISTORY_RETENTION_FLOOR_DAYS', 1, 1, 3650),
      retentionOverrideMinutes:
        optional(env, 'HISTORY_RETENTION_OVERRIDE_MINUTES') === null
          ? null
          : int('HISTORY_RETENTION_OVERRIDE_MINUTES', 0, 1, 5_256_000),
    },
    events: {
      concurrency: int('EVENT_DELIVERY_CONCURRENCY', 16, 1, 1_000),
      perTarget: int('EVENT_DELIVERY_PER_TARGET', 4, 1, 1_000),
      intervalMs: int('EVENT_DELIVERY_INTERVAL_MS', 500, 10, 60_000),
      timeoutMs: int('EVENT_DELIVERY_TIMEOUT_MS', 10_000, 100, 60_000),
      maxAttempts: int('EVENT_DELIVERY_MAX_ATTEMPTS', 10, 1, 100),
      retryInitialDelayMs: int('EVENT_RETRY_INITIAL_DELAY_MS', 1_000, 1, 3_600_000),
      retryMaxDelayMs: int('EVENT_RETRY_MAX_DELAY_MS', 600_000, 1, 86_400_000),
      retentionSeconds: int('EVENT_RETENTION_SECONDS', 86_400, 0, 30 * 86_400),
    },
    attemptRecord: {
      responseHeaders: responseHeaders(env),
      responseBodyBytes: int('ATTEMPT_RESPONSE_BODY_BYTES', 4096, 0, 65_536),
    },
    oidc,
    tracing: tracing(env),
    admission: {
      intervalMs: int('ADMISSION_INTERVAL_MS', 50, 5, 60_000),
      idleIntervalMs: int('ADMISSION_IDLE_INTERVAL_MS', 250, 5, 60_000),
      // At most the token bucket's capacity (one second of the rate), or the chunk never fills.
      rateChunkMs: int('ADMISSION_RATE_CHUNK_MS', 50, 0, 1000),
      tenantsPerRound: int('ADMISSION_TENANTS_PER_ROUND', 1000, 1, 100_000),
      batchSize: int('ADMISSION_BATCH_SIZE', 500, 1, 100_000),
      fleetBacklog: int('ADMISSION_FLEET_BACKLOG', 1000, 1, 1_000_000),
    },
  });
}

/** One worker process per core but one: the primary (api, poller, relay) keeps a core. */
function defaultWorkerProcesses(): number {
  return Math.max(1, availableParallelism() - 1);
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

function allowedHosts(env: Env): AllowedHosts {
  try {
    return parseAllowedHosts(optional(env, 'TARGET_ALLOWED_HOSTS') ?? undefined);
  } catch (error) {
    throw new InvalidConfigError(
      'TARGET_ALLOWED_HOSTS',
      (error instanceof Error ? error.message : String(error)).replace(
        /^TARGET_ALLOWED_HOSTS: /,
        '',
      ),
    );
  }
}

function tracing(env: Env): TracingConfig {
  const exporter = optional(env, 'OTEL_TRACES_EXPORTER');
  if (exporter !== null && exporter !== 'otlp' && exporter !== 'none') {
    throw new InvalidConfigError('OTEL_TRACES_EXPORTER', `must be otlp or none, got "${exporter}"`);
  }
  const sdkDisabled = optional(env, 'OTEL_SDK_DISABLED') === 'true';
  const endpoint =
    optional(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') ??
    optional(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  return {
    enabled: !sdkDisabled && exporter !== 'none' && (endpoint !== null || exporter === 'otlp'),
    serviceName: optional(env, 'OTEL_SERVICE_NAME') ?? 'dueline',
  };
}

function issuer(env: Env, port: number): string {
  const raw = optional(env, 'OIDC_ISSUER');
  if (raw === null) return `http://localhost:${port}`;
  try {
    const url = new URL(raw);
    if (url.protocol === 'https:' || url.protocol === 'http:') return raw.replace(/\/$/, '');
  } catch {
    // reported below
  }
  throw new InvalidConfigError('OIDC_ISSUER', `must be an http(s) URL, got "${raw}"`);
}

function responseHeaders(env: Env): string[] {
  const raw = optional(env, 'ATTEMPT_RESPONSE_HEADERS');
  if (raw === null) return [...DEFAULT_RESPONSE_HEADERS];
  const names = raw
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter(Boolean);
  for (const name of names) {
    const problem = responseHeaderProblem(name);
    if (problem) throw new InvalidConfigError('ATTEMPT_RESPONSE_HEADERS', problem);
  }
  return names;
}

function keyring(env: Env): SecretKeyring | null {
  const raw = optional(env, 'SECRETS_KEY');
  if (raw === null) return null;
  try {
    return parseKeyring(raw);
  } catch (error) {
    throw new InvalidConfigError('SECRETS_KEY', (error as Error).message);
  }
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

/** Plain objects and arrays are frozen all the way down; sets and parsed policies stay as built. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && (Array.isArray(value) || isPlain(value))) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
