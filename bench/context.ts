import type { DeliveryStats } from './analysis';
import type { PgServer } from './postgres';
import type { ResourceUsage } from './resources';
import type { Sink } from './sink';

/** What every scenario gets: the Postgres server, the sink, and the parsed flags. */
export interface BenchContext {
  pg: PgServer;
  sink: Sink;
  flags: BenchFlags;
}

export interface BenchFlags {
  /** Steady rates to run (occurrences/s). */
  rates: number[];
  /** Length of each steady window, seconds. */
  seconds: number;
  /** Steady: the same load for this long before the judged window opens (0: judged from cold). */
  warmupSeconds: number;
  /** Create the steady load through the API (cron up front, one-time jobs as it runs). */
  viaApi: boolean;
  /** Tenants the load is spread over. */
  tenants: number;
  /** Burst sizes. */
  burst: number[];
  /**
   * Instants per burst, `burstGapSeconds` apart: the first meets a fresh service, each later one
   * a service that sat idle in between (as once-a-minute cron schedules leave it).
   */
  burstRepeat: number;
  burstGapSeconds: number;
  /**
   * Burst: each job's payload, about this many bytes of incompressible JSON (0: `{}`). What a
   * large payload costs the instant: the claim reads it and the call sends it.
   */
  burstPayloadBytes: number;
  /** Background schedules for the scale scenario (the comparison point is 10,000). */
  scaleSchedules: number;
  /** Rate of the due load in the scale scenario, occurrences/s. */
  scaleRate: number;
  /** Peers: schedules per system and minute boundaries measured. */
  peerSchedules: number;
  peerMinutes: number;
  /** Creates: judged seconds per tenant (and of batches), concurrent single-create clients. */
  createSeconds: number;
  createClients: number;
  /** Ceiling: seconds per run and concurrent loops. */
  ceilingSeconds: number;
  /** Noisy: the flooding tenant's runs, and how many quiet tenants share the load beside it. */
  flood: number;
  quietTenants: number;
  /** Noisy: which of its phases run (see NOISY_PHASES in cli.ts). */
  noisyPhases: NoisyPhase[];
  /** Noisy, many-tenants phase: small tenants, and quiet runs of each over the window. */
  manyTenants: number;
  manyRuns: number;
  /** Noisy, fair-share phase: one-time runs of each of the three flooding tenants. */
  fairRuns: number;
  /** Noisy, fair-share phase: how long the target takes per call (holding a worker slot), ms. */
  fairTargetMs: number;
  /** Noisy, reserved-capacity phase: the normal-priority flood that saturates the fleet. */
  reservedFlood: number;
  /** Soak: the steady load, its phases and the history knobs passed to the service. */
  soak: SoakFlags;
}

export interface SoakFlags {
  /** Occurrences per second (cron schedules only, so the schedules table stays constant). */
  rate: number;
  /** Length of the plain steady phase, then of the held REPEATABLE READ transaction, then of the recovery, seconds. */
  steadySeconds: number;
  holdSeconds: number;
  recoverySeconds: number;
  /** A progress line and a sample every this many seconds (also the lag judging interval). */
  intervalSeconds: number;
  /** HISTORY_PARTITION_MINUTES, HISTORY_RETENTION_OVERRIDE_MINUTES, HISTORY_MAINTENANCE_INTERVAL_MS. */
  partitionMinutes: number;
  retentionMinutes: number;
  maintenanceMs: number;
}

/** The noisy scenario's phases, in the order they run. */
export const NOISY_PHASES = ['flood', 'many', 'fair', 'reserved'] as const;
export type NoisyPhase = (typeof NOISY_PHASES)[number];

/** One row of the final table. */
export interface ScenarioResult {
  scenario: string;
  /** Which system ran it: dueline, or a peer. */
  system: string;
  label: string;
  params: Record<string, unknown>;
  delivery: DeliveryStats | null;
  resources: ResourceUsage | null;
  /** Scenario-specific figures (burst completion time, ceiling rate, …). */
  extra: Record<string, unknown>;
  notes: string[];
}

export interface TargetCheck {
  target: string;
  pass: boolean;
  measured: string;
}

/**
 * A scenario of independent phases some of which failed: the rows of those that finished are
 * still reported (and written), and the scenario still counts as failed.
 */
export class PhasesFailed extends Error {
  constructor(
    readonly results: ScenarioResult[],
    readonly failures: ReadonlyArray<{ phase: string; error: unknown }>,
  ) {
    super(
      failures
        .map(({ phase, error }) => {
          const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
          return `phase ${phase}: ${message}`;
        })
        .join('\n'),
    );
  }
}
