import { Injectable } from '@nestjs/common';
import { MetricsService } from '../observability/metrics.service';

/** The poller's Prometheus series, registered once per application. */
@Injectable()
export class PollerMetrics {
  readonly dispatchLag;
  readonly oldestDueAge;
  readonly created;
  readonly skipped;
  readonly dropped;
  readonly shardsOwned;
  readonly leaseLosses;
  readonly clockSkew;

  constructor(metrics: MetricsService) {
    this.dispatchLag = metrics.histogram(
      'dueline_dispatch_lag_seconds',
      'Due instant to the commit of its occurrence and queue job (database clock)',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    );
    this.oldestDueAge = metrics.gauge(
      'dueline_oldest_due_age_seconds',
      'Age of the oldest due entry in the shards this poller holds (0 when none is due)',
    );
    this.created = metrics.counter('dueline_occurrences_created_total', 'Occurrences created', [
      'state',
    ]);
    this.skipped = metrics.counter(
      'dueline_occurrences_skipped_total',
      'Occurrences skipped, by reason',
      ['reason'],
    );
    this.dropped = metrics.counter(
      'dueline_due_entries_dropped_total',
      'Due-index entries dropped as stale (old revision, paused or cancelled schedule)',
    );
    this.shardsOwned = metrics.gauge('dueline_shards_owned', 'Due-index shards this poller holds');
    this.leaseLosses = metrics.counter(
      'dueline_shard_lease_losses_total',
      'Shard leases lost before renewal',
    );
    this.clockSkew = metrics.gauge(
      'dueline_clock_skew_seconds',
      'This replica clock minus the database clock (positive: the replica is ahead)',
    );
  }
}
