import {
  analyze,
  drainRate,
  firstAttemptsOf,
  firstReceipts,
  lagStats,
  occurrenceKey,
  type DeliveryStats,
  type ExpectedOccurrence,
} from '../analysis';
import type { Tenant } from '../api-client';
import type { Receipt } from '../sink';
import { PhasesFailed, type BenchContext, type NoisyPhase, type ScenarioResult } from '../context';
import { observe } from '../observe';
import { profileWindowArgument } from '../cpu-profile';
import { serviceNodeArgs } from '../service';
import { describeCost, runsDeliveredBetween } from '../occurrence-cost';
import { seedSchedules, seedTenants } from '../seed-sql';
import { describeSlowRuns, slowestRuns } from '../slow-runs';
import {
  describeStages,
  describeStageTimeline,
  runStages,
  stageLags,
  stageTimeline,
} from '../stages';
import { sleepUntil } from '../workload';
import { SINGLE, World } from '../world';
import { runFairShare } from './fair-share';
import { runReservedCapacity } from './reserved-capacity';

/** The flooding tenants' quotas: the issue's "a few thousand runs at one instant" tenant. */
const FLOOD_QUOTAS = {
  maxActiveSchedules: 1_000_000,
  dispatchRatePerSecond: 200,
  maxConcurrentRuns: 50,
};
/** The small tenants of the many-tenants phase: quotas a small customer would have. */
const SMALL_QUOTAS = {
  maxActiveSchedules: 1_000,
  dispatchRatePerSecond: 10,
  maxConcurrentRuns: 10,
};
/**
 * The quiet load of the flood phase: one run every QUIET_EVERY_MS, due from 1 s after the
 * flood's instant for as long as a flood takes to drain at its quota (--flood 10,000 at 200/s:
 * 50 s, 2,500 runs), and never less than MIN_QUIET_SECONDS. The isolation bound holds "while
 * the flood drains"; and a p99 of the 500 runs of ten seconds (what this phase measured before)
 * was the fifth-slowest run, so one stall of neighbouring instants decided it. The first
 * FIRST_STRETCH_MS, where the flood's backlog is written, are printed apart.
 */
const QUIET_EVERY_MS = 20;
const MIN_QUIET_SECONDS = 10;
const FIRST_STRETCH_MS = 10_000;
/**
 * Each isolation phase starts with the quiet load's own rate for this long, from the quiet
 * tenants, ending WARM_UP_GAP_MS before the flood's instant: its runs are held to the same
 * guarantees but their lag is not judged, so the judged runs measure a service that has run its
 * claim, call and completion paths (connections opened, statements planned, code compiled), not
 * the first second after its start. What that first second costs is printed apart.
 */
const WARM_UP_MS = 2000;
const WARM_UP_GAP_MS = 2000;

/**
 * noisy: tenant isolation, in the phases --noisy-phases names, each on a fresh database:
 *
 * - flood: one tenant's flood (--flood one-time runs at one instant, under 200 runs/s and 50
 *   concurrent) beside --quiet-tenants quiet tenants whose 500 runs fall due 1 to 11 s after
 *   the flood's instant; and the quiet load alone (the baseline). Quiet lag in both, and the
 *   rate the flood drains at against its quota.
 * - many: the same with --many-tenants small tenants (seeded by SQL, --many-runs quiet runs
 *   each, spread over the same 10 s) and two such floods; and that quiet load alone.
 * - fair: three flooding tenants of weights 1, 1, 2 on a saturated small fleet (fair-share.ts).
 * - reserved: priority-high runs beside a flood that saturates the fleet (reserved-capacity.ts).
 */
export async function runNoisy(ctx: BenchContext): Promise<ScenarioResult[]> {
  const runs: Record<NoisyPhase, () => Promise<ScenarioResult[]>> = {
    flood: async () => [await isolation(ctx, 'flood', 0), await isolation(ctx, 'flood', 1)],
    many: async () => [await isolation(ctx, 'many', 0), await isolation(ctx, 'many', 2)],
    fair: async () => [await runFairShare(ctx)],
    reserved: async () => [await runReservedCapacity(ctx)],
  };
  // The phases are independent (each on its own database): one that fails does not stop the
  // others, and the rows of those that finished are reported.
  const results: ScenarioResult[] = [];
  const failures: Array<{ phase: string; error: unknown }> = [];
  for (const phase of ctx.flags.noisyPhases) {
    try {
      results.push(...(await runs[phase]()));
    } catch (error) {
      console.error(
        `\n!! noisy phase ${phase} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      failures.push({ phase, error });
    }
  }
  if (failures.length > 0) throw new PhasesFailed(results, failures);
  return results;
}

interface QuietTenant {
  id: string;
  targetId: string;
}

/**
 * One isolation phase: `floods` flooding tenants (0: the baseline) of --flood runs each at one
 * instant, and the quiet tenants' runs due over the window that starts 1 s after it.
 */
async function isolation(
  ctx: BenchContext,
  phase: 'flood' | 'many',
  floods: number,
): Promise<ScenarioResult> {
  const { sink, flags } = ctx;
  sink.reset();
  const floodSize = floods > 0 ? flags.flood : 0;
  const many = phase === 'many';
  const tenantCount = many ? flags.manyTenants : flags.quietTenants;
  const seconds = quietSeconds(flags.flood);
  const quietCount = many ? flags.manyTenants * flags.manyRuns : (seconds * 1000) / QUIET_EVERY_MS;
  const quietEveryMs = (seconds * 1000) / quietCount;
  const label = isolationLabel(phase, floods, floodSize, tenantCount);
  console.log(
    `\n== ${label}: ${tenantCount.toLocaleString('en')} quiet tenant(s), ` +
      `${quietCount.toLocaleString('en')} quiet runs`,
  );
  const world = await World.start(ctx, `noisy-${phase}-${floods}`, SINGLE, {
    tenants: many ? 0 : flags.quietTenants,
  });
  try {
    const quietTenants: QuietTenant[] = many
      ? (
          await seedTenants(
            world.db.url,
            Array.from({ length: tenantCount }, (_, i) => `bench-small-${i}`),
            sink.url('ours'),
            SMALL_QUOTAS,
          )
        ).map((t) => ({ id: t.tenantId, targetId: t.targetId }))
      : world.tenants;
    if (many) console.log(`  seeded ${quietTenants.length} small tenants with SQL`);
    const flooders: Tenant[] = [];
    for (let i = 0; i < floods; i++) {
      flooders.push(
        await world.api.tenantWithTarget(`bench-flood-${i}`, sink.url('ours'), FLOOD_QUOTAS),
      );
    }
    const floodRuns = floods * floodSize;
    const floodAt =
      Math.ceil(
        (Date.now() + 6000 + WARM_UP_MS + WARM_UP_GAP_MS + (floodRuns + quietCount) / 4) / 1000,
      ) * 1000;
    const floodIds = await seedSchedules(world.db.url, floodRuns, (i) => ({
      tenantId: flooders[i % floods].id,
      targetId: flooders[i % floods].targetId,
      cron: null,
      dueAt: new Date(floodAt),
    }));
    // The quiet tenants' one-time runs, in turn, one at each of `count` instants.
    const seedQuiet = async (count: number, at: (i: number) => number) => {
      const ids = await seedSchedules(world.db.url, count, (i) => {
        const tenant = quietTenants[i % quietTenants.length];
        return {
          tenantId: tenant.id,
          targetId: tenant.targetId,
          cron: null,
          dueAt: new Date(at(i)),
        };
      });
      return ids.map((scheduleId, i): ExpectedOccurrence => ({ scheduleId, at: at(i) }));
    };
    const quiet = await seedQuiet(quietCount, (i) => floodAt + 1000 + Math.floor(i * quietEveryMs));
    const warmUpFrom = floodAt - WARM_UP_GAP_MS - WARM_UP_MS;
    const warmUp = await seedQuiet(
      Math.round(WARM_UP_MS / quietEveryMs),
      (i) => warmUpFrom + Math.floor(i * quietEveryMs),
    );
    if (Date.now() > warmUpFrom - 500) throw new Error('seeding ran past the warm-up');
    const flood: ExpectedOccurrence[] = floodIds.map((scheduleId) => ({ scheduleId, at: floodAt }));
    console.log(
      `  ${floods} × ${floodSize} flood runs due ${new Date(floodAt).toISOString()}, ` +
        `${quiet.length} quiet runs (one every ${quietEveryMs} ms) over the ${seconds} s after`,
    );
    await sleepUntil(floodAt - 1000);
    world.startMeter();
    // What a run costs in this phase (a flood's run is written waiting, then admitted): beside
    // the floods against alone, the cost of isolation in Postgres and in the service.
    const costMeter = world.costMeter();
    const meteredFrom = performance.timeOrigin + performance.now();
    await costMeter.start();
    // The floods drain side by side, each at its own quota.
    const drainSeconds = floodSize / FLOOD_QUOTAS.dispatchRatePerSecond;
    await observe({
      label,
      sink,
      window: { from: floodAt, to: quiet[quiet.length - 1].at },
      expected: () => [...flood, ...quiet],
      drainMs: Math.max(30_000, drainSeconds * 1000 * 2),
      everyMs: 5000,
    });
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const cost = await costMeter.stop(
      runsDeliveredBetween(receipts, meteredFrom, performance.timeOrigin + performance.now()),
      resources.service.cpuSeconds,
    );
    console.log(`  ${describeCost(cost)}`);
    if (serviceNodeArgs().includes('--cpu-prof')) {
      const window = { from: quiet[0].at, to: quiet[quiet.length - 1].at };
      console.log(
        `  cpu profiles: npm run bench:profile -- <files> ${profileWindowArgument(window)}`,
      );
    }
    const quietDelivery = deliveryOf(receipts, quiet);
    // The window's first stretch alone (the ten seconds this phase judged before): where the
    // flood's backlog is written.
    const firstStretch = quiet.filter((e) => e.at < quiet[0].at + FIRST_STRETCH_MS);
    const firstStretchLag = deliveryOf(receipts, firstStretch).lagMs;
    const warmUpDelivery = deliveryOf(receipts, warmUp);
    const notes: string[] = [describeCost(cost)];
    const warmUpLag = warmUpDelivery.lagMs;
    notes.push(
      `warm-up (lag not judged): ${warmUpDelivery.delivered}/${warmUp.length} runs over the ` +
        `${WARM_UP_MS / 1000} s ending ${WARM_UP_GAP_MS / 1000} s before the flood's instant, ` +
        `lag p50/p99 ${warmUpLag ? `${Math.round(warmUpLag.p50)}/${Math.round(warmUpLag.p99)} ms` : '-'} ` +
        `(the service's first second of runs), ${warmUpDelivery.early} early, ` +
        `${warmUpDelivery.duplicates} duplicated`,
    );
    console.log(`  ${notes[notes.length - 1]}`);
    notes.push(
      `quiet lag in the window's first ${FIRST_STRETCH_MS / 1000} s (${firstStretch.length} runs, ` +
        `due 1-${1 + FIRST_STRETCH_MS / 1000} s after the flood's instant): p50/p99 ` +
        `${firstStretchLag ? `${Math.round(firstStretchLag.p50)}/${Math.round(firstStretchLag.p99)} ms` : '-'}`,
    );
    console.log(`  ${notes[notes.length - 1]}`);
    // Only quiet runs fall in the quiet window: where their lag goes, from the ledger.
    const stages = await stageLags(world.db.url, {
      from: quiet[0].at,
      to: quiet[quiet.length - 1].at + 1,
    });
    if (stages) {
      notes.push(`quiet tenants' ${describeStages(stages)}`);
      console.log(`  ${notes[notes.length - 1]}`);
    }
    notes.push(
      `quiet lag p50/p99 by instant (s after the flood's): ${lagTimeline(receipts, quiet, floodAt)}`,
    );
    console.log(`  ${notes[notes.length - 1]}`);
    const timeline = await stageTimeline(world.db.url, {
      floodAt,
      from: quiet[0].at,
      to: quiet[quiet.length - 1].at + 1,
      bucketMs: TIMELINE_BUCKET_MS,
    });
    if (timeline.length > 0) {
      notes.push(
        `quiet dispatched/claimed p99 by instant: ${describeStageTimeline(timeline, TIMELINE_BUCKET_MS)}`,
      );
      console.log(`  ${notes[notes.length - 1]}`);
    }
    const slowest = slowestRuns(
      await runStages(world.db.url, { from: quiet[0].at, to: quiet[quiet.length - 1].at + 1 }),
      receipts,
      { origin: floodAt, count: SLOWEST_SHOWN },
    );
    if (slowest.length > 0) {
      notes.push(
        `quiet tail, the ${slowest.length} slowest runs (s after the flood's instant, ` +
          `dispatched/claimed/received ms): ${describeSlowRuns(slowest)}`,
      );
      console.log(`  ${notes[notes.length - 1]}`);
    }
    const floodFigures = flooders.map((flooder, f) => {
      const ids = floodIds.filter((_, i) => i % floods === f);
      const mine = firstAttemptsOf(receipts, ids);
      const drain = drainRate(
        mine.map((r) => r.receivedAt),
        floodAt,
      );
      const lag = lagStats(mine.map((r) => r.receivedAt - floodAt));
      const expected = ids.map((scheduleId) => ({ scheduleId, at: floodAt }));
      const figures = {
        size: ids.length,
        delivered: new Set(mine.map((r) => r.scheduleId)).size,
        drainPerSecond: Math.round(drain * 10) / 10,
        early: analyze(mine, expected, { from: floodAt, to: floodAt }).early,
        lastAfterMs: lag ? lag.max : null,
      };
      notes.push(
        `flood ${f + 1}: ${figures.delivered}/${figures.size} delivered, drained at ${figures.drainPerSecond} runs/s ` +
          `(${((drain / FLOOD_QUOTAS.dispatchRatePerSecond) * 100).toFixed(1)} % of its ` +
          `${FLOOD_QUOTAS.dispatchRatePerSecond}/s quota), last ${lag ? (lag.max / 1000).toFixed(1) : '-'} s after its instant`,
      );
      console.log(`  ${notes[notes.length - 1]}`);
      return figures;
    });
    const logs = world.logSummary();
    if (logs.errors > 0) notes.push(`service logged ${logs.errors} error line(s)`);
    return {
      scenario: 'noisy',
      system: 'dueline',
      label,
      params: {
        phase,
        floods,
        flood: floodSize,
        quietTenants: tenantCount,
        quietRuns: quietCount,
      },
      // The warm-up's runs are held to the same guarantees: never early, once, none lost.
      delivery: {
        ...quietDelivery,
        early: quietDelivery.early + warmUpDelivery.early,
        duplicates: quietDelivery.duplicates + warmUpDelivery.duplicates,
        lost: quietDelivery.lost + warmUpDelivery.lost,
      },
      resources,
      extra: {
        warmUp: { runs: warmUp.length, delivered: warmUpDelivery.delivered, lagMs: warmUpLag },
        firstStretch: { runs: firstStretch.length, lagMs: firstStretchLag },
        floods: floodFigures,
        floodQuotaPerSecond: FLOOD_QUOTAS.dispatchRatePerSecond,
        serviceLog: logs,
        cost,
      },
      notes,
    };
  } finally {
    await world.close();
  }
}

/**
 * The delivery of `expected` (one-time runs, each schedule once), judged over their own instants
 * from the receipts of their schedules only.
 */
function deliveryOf(
  receipts: readonly Receipt[],
  expected: readonly ExpectedOccurrence[],
): DeliveryStats {
  const ids = new Set(expected.map((e) => e.scheduleId));
  return analyze(
    receipts.filter((r) => ids.has(r.scheduleId)),
    expected,
    { from: expected[0].at, to: expected[expected.length - 1].at },
  );
}

/**
 * How long the quiet load lasts: a flood's drain at its quota (the same in the baseline, which
 * has no flood, so that both measure the same load), at least MIN_QUIET_SECONDS.
 */
function quietSeconds(floodSize: number): number {
  return Math.max(MIN_QUIET_SECONDS, Math.ceil(floodSize / FLOOD_QUOTAS.dispatchRatePerSecond));
}

function isolationLabel(
  phase: 'flood' | 'many',
  floods: number,
  floodSize: number,
  tenants: number,
): string {
  const size = floodSize.toLocaleString('en');
  if (phase === 'flood') {
    return floods
      ? `noisy: quiet tenants beside a ${size}-run flood`
      : 'noisy: quiet tenants alone (baseline)';
  }
  const count = tenants.toLocaleString('en');
  return floods
    ? `noisy: ${count} tenants beside ${floods === 2 ? 'two' : floods} ${size}-run floods`
    : `noisy: ${count} tenants' quiet runs alone (baseline)`;
}

const TIMELINE_BUCKET_MS = 5000;
/**
 * The slowest quiet runs listed with their stages: enough to tell one stall of neighbouring
 * instants (their dispatches or claims ending together) from runs slow one by one.
 */
const SLOWEST_SHOWN = 12;

/**
 * The quiet runs' first-receipt lag p50/p99 per TIMELINE_BUCKET_MS of their instants, counted
 * from the flood's instant: whether the tail sits where the flood is being dispatched or spreads
 * over the window.
 */
function lagTimeline(
  receipts: readonly Receipt[],
  quiet: readonly ExpectedOccurrence[],
  floodAt: number,
): string {
  const first = firstReceipts(receipts);
  const buckets = new Map<number, number[]>();
  for (const e of quiet) {
    const at = first.get(occurrenceKey(e.scheduleId, e.at));
    if (at === undefined) continue;
    const b = Math.floor((e.at - floodAt) / TIMELINE_BUCKET_MS);
    let lags = buckets.get(b);
    if (!lags) buckets.set(b, (lags = []));
    lags.push(at - e.at);
  }
  const seconds = TIMELINE_BUCKET_MS / 1000;
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([b, lags]) => {
      const stats = lagStats(lags)!;
      return `${b * seconds}-${(b + 1) * seconds} s ${Math.round(stats.p50)}/${Math.round(stats.p99)} ms`;
    })
    .join(', ');
}
