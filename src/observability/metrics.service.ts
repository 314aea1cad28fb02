import { Injectable } from '@nestjs/common';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  type MetricObjectWithValues,
  type MetricValue,
  Registry,
} from 'prom-client';
import { databaseRoundTrips, databaseWaits } from '../database';

/** Other processes' registries as `getMetricsAsJSON()` gives them (a primary's worker pool). */
export type PeerMetricsSource = () => Promise<
  Array<Array<MetricObjectWithValues<MetricValue<string>>>>
>;

/**
 * One Prometheus registry per application instance (not prom-client's global one), so several
 * app instances in one process, as in tests, never collide. The process and HTTP series live
 * here; the engine's are DuelineMetrics, fed by lifecycle events. A primary with a worker pool
 * adds its children as peers: a scrape then sums their series into its own (counters and
 * histograms add up; each series keeps prom-client's aggregation, e.g. memory summed).
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
    help: 'Processes running each role (api, poller, relay, worker): this one, plus its worker pool on a primary',
    labelNames: ['role'] as const,
    registers: [this.registry],
  });

  /** Read at scrape time from the database module's process-wide count. */
  readonly dbRoundTrips = countedElsewhere(this.registry, {
    name: 'dueline_db_round_trips_total',
    help: 'Round trips this process made to Postgres (queries and extended-protocol syncs, all pools)',
    read: databaseRoundTrips,
  });

  /** Read at scrape time, as above: statements that had to wait alone (see databaseWaits). */
  readonly dbWaits = countedElsewhere(this.registry, {
    name: 'dueline_db_waits_total',
    help: 'Statements this process wrote to Postgres with nothing else in flight on the connection (pipelined ones share a wait)',
    read: databaseWaits,
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dueline_' });
  }

  private peers: PeerMetricsSource | null = null;

  /** Series of other processes (a worker pool's children) to sum into every scrape. */
  addPeers(source: PeerMetricsSource): void {
    this.peers = source;
  }

  async render(): Promise<string> {
    if (!this.peers) return this.registry.metrics();
    const [own, peers] = await Promise.all([this.registry.getMetricsAsJSON(), this.peers()]);
    return AggregatorRegistry.aggregate([own, ...peers]).metrics();
  }

  /** This process's own series, for a primary that aggregates them. */
  ownMetrics(): Promise<Array<MetricObjectWithValues<MetricValue<string>>>> {
    return this.registry.getMetricsAsJSON();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

/** A counter whose value another module keeps: read at scrape time, never incremented here. */
function countedElsewhere(
  registry: Registry,
  counter: { name: string; help: string; read: () => number },
): Counter {
  return new Counter({
    name: counter.name,
    help: counter.help,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(counter.read());
    },
  });
}
