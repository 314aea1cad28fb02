import { analyze, receivedCheck, undeliveredOf, withLedger } from '../analysis';
import { profileWindowArgument } from '../cpu-profile';
import { ledgerCheck } from '../ledger-check';
import { serviceNodeArgs } from '../service';
import { describeStages, stageLags } from '../stages';
import type { BenchContext, ScenarioResult } from '../context';
import { observe } from '../observe';
import { describeCost, runsDeliveredBetween } from '../occurrence-cost';
import type { BenchDatabase } from '../postgres';
import { DEFAULT_STEADY, SteadyWorkload, sleepUntil } from '../workload';
import { ReplicaSpec, World } from '../world';

export interface SteadyRunOptions {
  scenario: string;
  label: string;
  rate: number;
  seconds: number;
  /**
   * Load that runs before the judged window, on the same replicas: caches cold after a bulk seed
   * (a million rows written seconds before) are a property of the bench, not of the scheduler.
   */
  warmupSeconds?: number;
  replicas: ReplicaSpec[];
  env?: Record<string, string>;
  /** Runs on the fresh database before the replicas start (e.g. seeding a million schedules). */
  beforeServices?: (db: BenchDatabase) => Promise<void>;
  /** Called every progress tick with the time since the window opened. */
  onTick?: (world: World, elapsedMs: number) => Promise<void> | void;
  drainMs?: number;
  params?: Record<string, unknown>;
}

/** Edge margin: instants this close to either end of the window are not judged. */
const EDGE_MS = 1000;
/** How far ahead of seeding the window opens when the load is seeded with SQL. */
const SQL_SEED_LEAD_MS = 15_000;

/**
 * The shared body of steady, scale and replicas: seed the cron schedules, open a window a few
 * seconds later, feed one-time jobs through it, meter the replicas and Postgres over the window
 * and the drain, then judge every occurrence due inside it.
 */
export async function steadyRun(ctx: BenchContext, o: SteadyRunOptions): Promise<ScenarioResult> {
  const { sink, flags } = ctx;
  sink.reset();
  const warmupMs = (o.warmupSeconds ?? 0) * 1000;
  console.log(
    `\n== ${o.label}: ${o.rate}/s for ${o.seconds}s` +
      (warmupMs ? ` after ${o.warmupSeconds}s of warm-up` : '') +
      `, ${flags.tenants} tenant(s)`,
  );
  const world = await World.start(ctx, o.scenario, o.replicas, {
    tenants: flags.tenants,
    env: o.env,
    beforeServices: o.beforeServices,
  });
  try {
    const workload = new SteadyWorkload(world.api, world.tenants, {
      ...DEFAULT_STEADY,
      rate: o.rate,
      seconds: o.seconds + (o.warmupSeconds ?? 0),
    });
    const seedStart = Date.now();
    let windowStart: number;
    let feeding: Promise<void> = Promise.resolve();
    if (flags.viaApi) {
      // Through the API: cron schedules first (they start firing as they are created), then the
      // one-time jobs while the window runs, leadSeconds before each is due.
      await workload.seedCron((done, total) =>
        console.log(`  creating cron schedules ${done}/${total}`),
      );
      windowStart =
        Math.ceil((Date.now() + (workload.options.leadSeconds + 2) * 1000) / 1000) * 1000;
      feeding = workload.feed(windowStart);
    } else {
      windowStart = Math.ceil((Date.now() + SQL_SEED_LEAD_MS) / 1000) * 1000;
      await workload.seedSql(world.db.url, windowStart);
      if (Date.now() > windowStart - 1000)
        throw new Error('seeding ran into the window; use --seconds lower');
    }
    const seedSeconds = (Date.now() - seedStart) / 1000;
    console.log(
      `  ${workload.cronSchedules} cron schedules (${workload.cronPerSecond}/s) + ` +
        `${workload.oncePerSecond}/s one-time jobs ${flags.viaApi ? 'via the API' : 'seeded with SQL'} ` +
        `in ${seedSeconds.toFixed(1)} s; window opens ${new Date(windowStart).toISOString()}`,
    );
    const windowEnd = windowStart + warmupMs + o.seconds * 1000;
    const judged = { from: windowStart + warmupMs + EDGE_MS, to: windowEnd - EDGE_MS };
    await sleepUntil(windowStart);
    world.startMeter();
    const costMeter = world.costMeter();
    const meteredFrom = performance.timeOrigin + performance.now();
    await costMeter.start();
    const { drainedMs } = await observe({
      label: o.label,
      sink,
      window: { from: windowStart, to: windowEnd },
      expected: () => workload.expected(judged.from, judged.to),
      drainMs: o.drainMs ?? 30_000,
      status: flags.viaApi
        ? () => `once-created=${workload.feeder.created} late=${workload.feeder.late}`
        : undefined,
      onTick: o.onTick ? (elapsed) => o.onTick!(world, elapsed) : undefined,
    });
    workload.stop();
    await feeding;
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const cost = await costMeter.stop(
      runsDeliveredBetween(receipts, meteredFrom, performance.timeOrigin + performance.now()),
      resources.service.cpuSeconds,
    );
    console.log(`  ${describeCost(cost)}`);
    const expected = workload.expected(judged.from, judged.to);
    const verdict = await ledgerCheck(world.db.url, undeliveredOf(receipts, expected), (e) =>
      receivedCheck(sink.all())(e),
    );
    const delivery = withLedger(analyze(receipts, expected, judged), verdict);
    if (serviceNodeArgs().includes('--cpu-prof')) {
      console.log(
        `  cpu profiles: npm run bench:profile -- <files> ${profileWindowArgument(judged)}`,
      );
    }
    const stages = await stageLags(world.db.url, judged);
    const logs = world.logSummary();
    const notes: string[] = [];
    if (stages) {
      notes.push(describeStages(stages));
      console.log(`  ${describeStages(stages)}`);
    }
    if (workload.feeder.late > 0 || workload.feeder.failed > 0) {
      notes.push(
        `one-time feeder: ${workload.feeder.late} created <1 s before due, ` +
          `${workload.feeder.failed} refused (excluded)`,
      );
    }
    if (logs.errors > 0) notes.push(`service logged ${logs.errors} error line(s)`);
    const apiNote = world.apiNote();
    if (apiNote) notes.push(apiNote);
    return {
      scenario: o.scenario,
      system: 'dueline',
      label: o.label,
      params: {
        rate: o.rate,
        seconds: o.seconds,
        warmupSeconds: o.warmupSeconds ?? 0,
        tenants: flags.tenants,
        seededWith: flags.viaApi ? 'api' : 'sql',
        cronSchedules: workload.cronSchedules,
        cronPerSecond: workload.cronPerSecond,
        oncePerSecond: workload.oncePerSecond,
        replicas: o.replicas.map((r) => `${r.name}:${r.roles}`),
        ...o.params,
      },
      delivery,
      resources,
      extra: {
        cost,
        seedSeconds: Math.round(seedSeconds * 10) / 10,
        stages,
        drainedMs,
        feeder: { ...workload.feeder, minLeadMs: Math.round(workload.feeder.minLeadMs) },
        serviceLog: logs,
        malformedRequests: sink.malformedCount(),
      },
      notes,
    };
  } finally {
    await world.close();
  }
}
