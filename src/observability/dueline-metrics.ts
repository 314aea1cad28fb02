import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from './metrics.service';

/**
 * Every Prometheus series of the engine, declared once per application (its own registry, so
 * app instances in one process never collide). Fed by lifecycle events (LifecycleSubscriber),
 * never updated from a module directly.
 */
@Injectable()
export class DuelineMetrics {
  readonly attempts: Counter<'outcome'>;
  readonly staleCompletions: Counter;
  readonly leaseExpiries: Counter;
  readonly unknownOutcomes: Counter;
  readonly claimsRefused: Counter<'reason'>;
  readonly unclaimableJobs: Counter<'reason'>;
  readonly targetLatency: Histogram<'result'>;
  readonly dispatchLag: Histogram;
  readonly oldestDueAge: Gauge;
  readonly created: Counter<'state'>;
  readonly skipped: Counter<'reason'>;
  readonly dropped: Counter;
  readonly shardsOwned: Gauge;
  readonly leaseLosses: Counter;
  readonly clockSkew: Gauge;
  readonly republished: Counter;
  readonly outboxAge: Gauge;
  readonly historyPartitionsCreated: Counter;
  readonly historyPartitionsDropped: Counter;
  readonly historyPartitionsWaiting: Gauge;
  readonly admittedFromWaiting: Counter;
  readonly handedOffRuns: Counter;
  readonly handoffReleasedRuns: Counter;
  readonly waitingRuns: Gauge<'reason'>;
  readonly oldestWaiting: Gauge;
  readonly deadlineSkips: Counter;
  readonly targetBackoffs: Counter;
  readonly targetsDisabled: Counter;
  readonly targetGoneRuns: Counter;
  readonly runStarts: Counter<'priority'>;
  readonly workerProcesses: Gauge;
  readonly workerProcessRestarts: Counter;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
      new Counter<L>({ name, help, labelNames, registers });
    const gauge = (name: string, help: string) => new Gauge({ name, help, registers });
    this.attempts = counter(
      'dueline_attempts_total',
      'Attempts ended, by outcome (succeeded, retryable, failed, unknown, cancelled, lease_lost)',
      ['outcome'],
    );
    this.staleCompletions = counter(
      'dueline_stale_completions_total',
      'Completions rejected because their fencing token was no longer current',
    );
    this.leaseExpiries = counter(
      'dueline_lease_expiries_total',
      'RUNNING runs whose lease expired and that the sweeper reclaimed',
    );
    this.unknownOutcomes = counter(
      'dueline_unknown_outcomes_total',
      'Runs that ended UNKNOWN: the target may have acted and cannot tell us',
    );
    this.claimsRefused = counter(
      'dueline_claims_refused_total',
      'Claims refused, by reason (throttled_concurrency and throttled_rate count tenant throttling)',
      ['reason'],
    );
    this.unclaimableJobs = counter(
      'dueline_unclaimable_jobs_total',
      'Queue jobs acknowledged without calling the target because their run could not be claimed',
      ['reason'],
    );
    this.targetLatency = new Histogram({
      name: 'dueline_target_latency_seconds',
      help: 'Target call duration by result (response, not_sent, maybe_sent)',
      labelNames: ['result'],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.dispatchLag = new Histogram({
      name: 'dueline_dispatch_lag_seconds',
      help: 'Due instant to the commit of its occurrence and queue job (database clock)',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.oldestDueAge = gauge(
      'dueline_oldest_due_age_seconds',
      'Age of the oldest due entry in the shards this poller holds (0 when none is due)',
    );
    this.created = counter('dueline_occurrences_created_total', 'Occurrences created', ['state']);
    this.skipped = counter('dueline_occurrences_skipped_total', 'Occurrences skipped, by reason', [
      'reason',
    ]);
    this.dropped = counter(
      'dueline_due_entries_dropped_total',
      'Due-index entries dropped as stale (old revision, paused or cancelled schedule)',
    );
    this.shardsOwned = gauge('dueline_shards_owned', 'Due-index shards this poller holds');
    this.leaseLosses = counter(
      'dueline_shard_lease_losses_total',
      'Shard leases lost before renewal',
    );
    this.clockSkew = gauge(
      'dueline_clock_skew_seconds',
      'This replica clock minus the database clock (positive: the replica is ahead)',
    );
    this.republished = counter(
      'dueline_runs_republished_total',
      'QUEUED runs whose queue job was gone and was published again',
    );
    this.outboxAge = gauge(
      'dueline_outbox_age_seconds',
      'Age of the oldest run that is ready to start but has not started',
    );
    this.historyPartitionsCreated = counter(
      'dueline_history_partitions_created_total',
      'History partitions (runs with their attempts) created ahead by the maintenance',
    );
    this.historyPartitionsDropped = counter(
      'dueline_history_partitions_dropped_total',
      'History partitions detached and dropped after the retention',
    );
    this.historyPartitionsWaiting = gauge(
      'dueline_history_partitions_waiting',
      'History partitions past the retention kept because they hold QUEUED, RUNNING or RETRY_WAIT runs',
    );
    this.admittedFromWaiting = counter(
      'dueline_admission_admitted_total',
      "Runs the admitter took from their tenants' waiting lists",
    );
    this.handedOffRuns = counter(
      'dueline_handoff_runs_total',
      'Runs the poller handed to a worker of the same service instead of leaving them to a fetch',
    );
    this.handoffReleasedRuns = counter(
      'dueline_handoff_released_runs_total',
      'Handed-off runs a worker left to the queue (stopping, or no room before half their grace)',
    );
    this.runStarts = counter(
      'dueline_run_starts_total',
      'Attempts started (claims), by the run priority (high, normal, low)',
      ['priority'],
    );
    this.waitingRuns = new Gauge({
      name: 'dueline_admission_waiting_runs',
      help: 'Runs waiting for admission, by reason (throttled_concurrency, throttled_rate, throttled_fleet)',
      labelNames: ['reason'],
      registers,
    });
    this.oldestWaiting = gauge(
      'dueline_admission_oldest_waiting_seconds',
      'Age of the oldest run waiting for admission (0 when none waits)',
    );
    this.deadlineSkips = counter(
      'dueline_deadline_skips_total',
      'Runs SKIPPED because they could not start within their start deadline',
    );
    // Per-target flow control, without a target label (targets are tenants' records).
    this.targetBackoffs = counter(
      'dueline_target_backoffs_total',
      'Times a target answered 429 or 503 with Retry-After and all its runs were held back',
    );
    this.targetsDisabled = counter(
      'dueline_targets_disabled_total',
      'Targets disabled because they answered 410 Gone',
    );
    this.targetGoneRuns = counter(
      'dueline_target_gone_runs_total',
      'Waiting runs the admitter ended FAILED target_gone because their target is disabled',
    );
    // Only a primary with a worker pool (WORKER_PROCESSES) moves these.
    this.workerProcesses = gauge(
      'dueline_worker_processes',
      'Worker processes of this primary that are ready and consuming jobs',
    );
    this.workerProcessRestarts = counter(
      'dueline_worker_process_restarts_total',
      'Worker processes of this primary that exited unexpectedly and were forked again',
    );
  }
}
