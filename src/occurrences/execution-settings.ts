import { Injectable } from '@nestjs/common';

/**
 * Timings of execution: leases, heartbeats, the sweeper and the built-in worker. One injectable
 * object so every part reads the same values; tests shorten them through `app.get()` before any
 * run starts (values are read at use, except the worker's queue options, read at boot).
 *
 * The lease must outlast several heartbeats so that one slow heartbeat does not lose it.
 */
@Injectable()
export class ExecutionSettings {
  /** How long a claim (and each heartbeat) holds a run. */
  leaseMs = 30_000;
  /** How often a holder renews its lease and looks for a cancel request. */
  heartbeatIntervalMs = 5_000;
  /** How often the sweeper looks for expired leases. */
  sweepIntervalMs = 1_000;
  /** Most expired leases reclaimed per tenant per sweep, and tenants per sweep. */
  sweepBatchSize = 100;
  sweepTenantsPerTick = 20;
  /** A throttled run's job comes back after this long, plus up to as much again in jitter. */
  throttledRetryMs = 1_000;
  /**
   * Built-in worker: attempts in flight per process (a fetch waits for room for a batch), jobs
   * fetched in batches of workerBatchSize by workerFetchLoops loops. Claims made at once in a
   * process are merged into one statement of up to claimBatchSize runs; completions that end
   * together into one transaction of up to completionBatchSize. One loop: a flood due at one
   * instant is then fetched and claimed whole rather than in two halves that queue for the same
   * tenants' permit locks (steady 200/s p99 ~95 ms against ~100-120 with two; the 10,000 burst
   * drains ~13 % slower).
   */
  workerConcurrency = 600;
  workerBatchSize = 200;
  workerFetchLoops = 1;
  claimBatchSize = 200;
  completionBatchSize = 100;
  /** Built-in worker: queue poll intervals (seconds); NOTIFY wakes it sooner for new jobs. */
  workerPollingIntervalSeconds = 0.5;
  workerNotifyPollingIntervalSeconds = 2;
  /** How many times a completion is retried when the database is briefly unreachable. */
  completionRetries = 6;
  completionRetryBaseMs = 200;
}
