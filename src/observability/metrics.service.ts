import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { databaseRoundTrips } from '../database';

/**
 * One Prometheus registry per application instance (not prom-client's global one), so several
 * app instances in one process, as in tests, never collide. The process and HTTP series live
 * here; the engine's are DuelineMetrics, fed by lifecycle events.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequestDuration = new Histogram({
    name: 'dueline_http_request_duration_seconds',
    help: 'HTTP request latency by method, route template and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly roleActive = new Gauge({
    name: 'dueline_role_active',
    help: '1 for each role (api, poller, relay, worker) running in this process',
    labelNames: ['role'] as const,
    registers: [this.registry],
  });

  /** Read at scrape time from the database module's process-wide count. */
  readonly dbRoundTrips = new Counter({
    name: 'dueline_db_round_trips_total',
    help: 'Round trips this process made to Postgres (queries and extended-protocol syncs, all pools)',
    registers: [this.registry],
    collect() {
      this.reset();
      this.inc(databaseRoundTrips());
    },
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dueline_' });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
