import { ApiClient, mapLimit, Tenant } from './api-client';
import type { BenchContext } from './context';
import { OccurrenceCostMeter, serviceTraffic } from './occurrence-cost';
import type { BenchDatabase, PgServer } from './postgres';
import { ResourceMeter } from './resources';
import { ADMIN_TOKEN, ServiceProcess, stopAll } from './service';

export interface ReplicaSpec {
  name: string;
  roles: string;
}

/** One process with every role: the default deployment. */
export const SINGLE: ReplicaSpec[] = [{ name: 'dueline', roles: 'api,poller,relay,worker' }];

/**
 * A scenario's running system: a fresh database, the replicas on it, tenants with a target
 * pointing at the sink, and a resource meter over the replicas and Postgres.
 */
export class World {
  readonly meter: ResourceMeter;
  private readonly pg: PgServer;

  private constructor(
    readonly db: BenchDatabase,
    readonly services: ServiceProcess[],
    readonly api: ApiClient,
    readonly tenants: Tenant[],
    ctx: BenchContext,
  ) {
    this.meter = new ResourceMeter(ctx.pg.postmasterPid);
    this.pg = ctx.pg;
  }

  static async start(
    ctx: BenchContext,
    label: string,
    replicas: ReplicaSpec[],
    options: {
      tenants: number;
      env?: Record<string, string>;
      beforeServices?: (db: BenchDatabase) => Promise<void>;
    },
  ): Promise<World> {
    const db = await ctx.pg.freshDatabase(label);
    const services: ServiceProcess[] = [];
    try {
      await options.beforeServices?.(db);
      // One at a time: each runs migrations under the advisory lock at boot (already applied).
      for (const spec of replicas) {
        services.push(await ServiceProcess.start(spec.name, db.url, spec.roles, options.env));
      }
      const apiProcess = services.find((s) => s.roles.split(',').includes('api'));
      if (!apiProcess) throw new Error('no replica runs the api role');
      const api = new ApiClient(apiProcess.url, ADMIN_TOKEN);
      const tenants = await mapLimit(
        Array.from({ length: options.tenants }, (_, i) => i),
        4,
        (i) => api.tenantWithTarget(`bench-${label}-${i}`, ctx.sink.url('ours')),
      );
      return new World(db, services, api, tenants, ctx);
    } catch (error) {
      await stopAll(services);
      await db.drop().catch(() => undefined);
      throw error;
    }
  }

  /** Where the api role listens (the first replica that runs it). */
  get apiUrl(): string {
    return this.services.find((s) => s.roles.split(',').includes('api'))!.url;
  }

  startMeter(): void {
    this.meter.start(this.services.map((s) => ({ name: `${s.name} (${s.roles})`, pid: s.pid })));
  }

  /** A meter of what a run costs this world's database and replicas (see OccurrenceCostMeter). */
  costMeter(): OccurrenceCostMeter {
    return new OccurrenceCostMeter(
      this.pg,
      this.db,
      serviceTraffic(() => this.services.map((s) => s.url)),
    );
  }

  /** Warn/error log lines per replica, and the last lines of any replica that logged errors. */
  logSummary(): { warnings: number; errors: number; errorTail: string[] } {
    const errorTail = this.services
      .filter((s) => s.errors > 0)
      .flatMap((s) => s.tail(5).map((line) => `${s.name}: ${line.slice(0, 300)}`));
    return {
      warnings: this.services.reduce((n, s) => n + s.warnings, 0),
      errors: this.services.reduce((n, s) => n + s.errors, 0),
      errorTail,
    };
  }

  /** A note when management calls had to be retried (a server error is a finding, not noise). */
  apiNote(): string | null {
    const { serverErrors, rateLimited } = this.api;
    if (serverErrors === 0 && rateLimited === 0) return null;
    return `management API: ${serverErrors} call(s) answered 5xx and were retried, ${rateLimited} rate-limited`;
  }

  async close(options: { keepDatabase?: boolean } = {}): Promise<void> {
    await stopAll(this.services);
    // Error lines are the first thing to look at when a scenario fails or misbehaves.
    for (const s of this.services) {
      const errors = s.errorLines();
      if (errors.length === 0) continue;
      console.log(`  ${s.name} logged ${s.errors} error line(s); first ones:`);
      for (const line of errors.slice(0, 3)) console.log(`    ${line.slice(0, 600)}`);
    }
    if (!options.keepDatabase) await this.db.drop().catch(() => undefined);
  }
}
