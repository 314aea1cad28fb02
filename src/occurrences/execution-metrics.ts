import { Injectable } from '@nestjs/common';
import type { Counter, Histogram } from 'prom-client';
import { MetricsService } from '../observability/metrics.service';

/** Every execution metric, registered once per application (one provider, one registry). */
@Injectable()
export class ExecutionMetrics {
  readonly attempts: Counter<'outcome'>;
  readonly staleCompletions: Counter;
  readonly leaseExpiries: Counter;
  readonly unknownOutcomes: Counter;
  readonly claimsRefused: Counter<'reason'>;
  readonly unclaimableJobs: Counter<'reason'>;
  readonly targetLatency: Histogram<'result'>;

  constructor(metrics: MetricsService) {
    this.attempts = metrics.counter(
      'dueline_attempts_total',
      'Attempts ended, by outcome (succeeded, retryable, failed, unknown, cancelled, lease_lost)',
      ['outcome'],
    );
    this.staleCompletions = metrics.counter(
      'dueline_stale_completions_total',
      'Completions rejected because their fencing token was no longer current',
    );
    this.leaseExpiries = metrics.counter(
      'dueline_lease_expiries_total',
      'RUNNING runs whose lease expired and that the sweeper reclaimed',
    );
    this.unknownOutcomes = metrics.counter(
      'dueline_unknown_outcomes_total',
      'Runs that ended UNKNOWN: the target may have acted and cannot tell us',
    );
    this.claimsRefused = metrics.counter(
      'dueline_claims_refused_total',
      'Claims refused, by reason (throttled counts tenant concurrency throttling)',
      ['reason'],
    );
    this.unclaimableJobs = metrics.counter(
      'dueline_unclaimable_jobs_total',
      'Queue jobs acknowledged without calling the target because their run could not be claimed',
      ['reason'],
    );
    this.targetLatency = metrics.histogram(
      'dueline_target_latency_seconds',
      'Target call duration by result (response, not_sent, maybe_sent)',
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      ['result'],
    );
  }
}
