import { analyze, lagStats, type ExpectedOccurrence } from '../analysis';
import type { Tenant } from '../api-client';
import type { BenchContext, ScenarioResult } from '../context';
import { observe } from '../observe';
import { seedSchedules } from '../seed-sql';
import { describeStages, stageLags } from '../stages';
import { sleepUntil } from '../workload';
import { SINGLE, World } from '../world';

/** The flooding tenant's quotas: the "a few thousand runs at one instant" tenant. */
const FLOOD_QUOTAS = {
  maxActiveSchedules: 1_000_000,
  dispatchRatePerSecond: 200,
  maxConcurrentRuns: 50,
};
/** The quiet tenants' load: one run every QUIET_EVERY_MS over QUIET_SECONDS, round-robin. */
const QUIET_EVERY_MS = 125;
const QUIET_SECONDS = 10;

/**
 * noisy: one tenant's flood (--flood one-time runs at one instant, under 200 runs/s and 50
 * concurrent) beside quiet tenants whose runs fall due 1 to 10 s after the flood's instant.
 * Run twice on fresh databases: the quiet load alone (the baseline), then with the flood. It
 * reports the quiet tenants' lag in both, and the rate the flood drains at against its quota.
 */
export async function runNoisy(ctx: BenchContext): Promise<ScenarioResult[]> {
  const baseline = await phase(ctx, 0);
  const flooded = await phase(ctx, ctx.flags.flood);
  return [baseline, flooded];
}

async function phase(ctx: BenchContext, floodSize: number): Promise<ScenarioResult> {
  const { sink, flags } = ctx;
  sink.reset();
  const label = floodSize
    ? `noisy: quiet tenants beside a ${floodSize.toLocaleString('en')}-run flood`
    : 'noisy: quiet tenants alone (baseline)';
  console.log(`\n== ${label}, ${flags.quietTenants} quiet tenant(s)`);
  const world = await World.start(ctx, floodSize ? 'noisy' : 'noisy-base', SINGLE, {
    tenants: flags.quietTenants,
  });
  try {
    const flooder: Tenant = await world.api.tenantWithTarget(
      'bench-flood',
      sink.url('ours'),
      FLOOD_QUOTAS,
    );
    const floodAt = Math.ceil((Date.now() + 6000 + floodSize / 5) / 1000) * 1000;
    const floodIds = floodSize
      ? await seedSchedules(world.db.url, floodSize, () => ({
          tenantId: flooder.id,
          targetId: flooder.targetId,
          cron: null,
          dueAt: new Date(floodAt),
        }))
      : [];
    const quietCount = (QUIET_SECONDS * 1000) / QUIET_EVERY_MS;
    const quietAt = (i: number) => floodAt + 1000 + i * QUIET_EVERY_MS;
    const quietIds = await seedSchedules(world.db.url, quietCount, (i) => {
      const tenant = world.tenants[i % world.tenants.length];
      return {
        tenantId: tenant.id,
        targetId: tenant.targetId,
        cron: null,
        dueAt: new Date(quietAt(i)),
      };
    });
    if (Date.now() > floodAt - 1000) throw new Error('seeding ran past the flood instant');
    const quiet: ExpectedOccurrence[] = quietIds.map((scheduleId, i) => ({
      scheduleId,
      at: quietAt(i),
    }));
    const flood: ExpectedOccurrence[] = floodIds.map((scheduleId) => ({ scheduleId, at: floodAt }));
    console.log(
      `  ${floodIds.length} flood runs due ${new Date(floodAt).toISOString()}, ${quietIds.length} quiet runs over the ${QUIET_SECONDS} s after`,
    );
    await sleepUntil(floodAt - 1000);
    world.startMeter();
    const drainSeconds = floodSize / FLOOD_QUOTAS.dispatchRatePerSecond;
    await observe({
      label,
      sink,
      window: { from: floodAt, to: quietAt(quietCount - 1) },
      expected: () => [...flood, ...quiet],
      drainMs: Math.max(30_000, drainSeconds * 1000 * 2),
      everyMs: 5000,
    });
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const quietSet = new Set(quietIds);
    const floodSet = new Set(floodIds);
    const quietDelivery = analyze(
      receipts.filter((r) => quietSet.has(r.scheduleId)),
      quiet,
      { from: quiet[0].at, to: quiet[quiet.length - 1].at },
    );
    const floodReceipts = receipts.filter((r) => floodSet.has(r.scheduleId) && r.attempt === 1);
    const drain = drainRate(
      floodReceipts.map((r) => r.receivedAt),
      floodAt,
    );
    const floodLag = lagStats(floodReceipts.map((r) => r.receivedAt - floodAt));
    const logs = world.logSummary();
    const notes: string[] = [];
    // Only quiet runs fall in the quiet window: where their lag goes, from the ledger.
    const stages = await stageLags(world.db.url, {
      from: quiet[0].at,
      to: quiet[quiet.length - 1].at + 1,
    });
    if (stages) {
      notes.push(`quiet tenants' ${describeStages(stages)}`);
      console.log(`  ${notes[notes.length - 1]}`);
    }
    if (floodSize) {
      notes.push(
        `flood: ${floodReceipts.length}/${floodSize} delivered, drained at ${drain.toFixed(1)} runs/s ` +
          `(${((drain / FLOOD_QUOTAS.dispatchRatePerSecond) * 100).toFixed(1)} % of its ` +
          `${FLOOD_QUOTAS.dispatchRatePerSecond}/s quota), last ${floodLag ? (floodLag.max / 1000).toFixed(1) : '-'} s after its instant`,
      );
      console.log(`  ${notes[notes.length - 1]}`);
    }
    if (logs.errors > 0) notes.push(`service logged ${logs.errors} error line(s)`);
    return {
      scenario: 'noisy',
      system: 'dueline',
      label,
      params: { flood: floodSize, quietTenants: flags.quietTenants },
      delivery: quietDelivery,
      resources,
      extra: {
        floodDelivered: floodReceipts.length,
        floodDrainPerSecond: Math.round(drain * 10) / 10,
        floodQuotaPerSecond: FLOOD_QUOTAS.dispatchRatePerSecond,
        floodEarly: analyze(floodReceipts, flood, { from: floodAt, to: floodAt }).early,
        serviceLog: logs,
      },
      notes,
    };
  } finally {
    await world.close();
  }
}

/**
 * Runs per second while the backlog lasted: the receipts between the first second after the
 * instant (the bucket's burst) and the last receipt, over that span.
 */
function drainRate(receivedAt: number[], instant: number): number {
  const after = receivedAt.filter((t) => t >= instant + 1000).sort((a, b) => a - b);
  if (after.length < 2) return 0;
  return (after.length - 1) / ((after[after.length - 1] - after[0]) / 1000);
}
