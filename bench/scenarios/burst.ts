import {
  analyze,
  receivedCheck,
  undeliveredOf,
  withLedger,
  type ExpectedOccurrence,
} from '../analysis';
import { ledgerCheck } from '../ledger-check';
import { describeStages, stageLags } from '../stages';
import type { BenchContext, ScenarioResult } from '../context';
import { observe } from '../observe';
import { seedSchedules } from '../seed-sql';
import { sleepUntil } from '../workload';
import { SINGLE, World } from '../world';

/** burst: N one-time jobs all due at the same instant; how long until the last one arrives. */
export async function runBurst(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const size of ctx.flags.burst) results.push(await burst(ctx, size));
  return results;
}

async function burst(ctx: BenchContext, size: number): Promise<ScenarioResult> {
  const { sink, flags } = ctx;
  sink.reset();
  const label = `burst ${size.toLocaleString('en')}`;
  console.log(`\n== ${label}: one-time jobs due at one instant, ${flags.tenants} tenant(s)`);
  const world = await World.start(ctx, 'burst', SINGLE, { tenants: flags.tenants });
  try {
    // Seeded with SQL, as the API's create leaves them (schedule row + due-index entry): creating
    // 100,000 jobs through the API would take longer than the burst, and only dispatch is measured.
    const seedStart = Date.now();
    const dueAt = Math.ceil((Date.now() + 5000 + size / 5) / 1000) * 1000;
    const runAt = new Date(dueAt).toISOString();
    const ids = await seedSchedules(world.db.url, size, (i) => {
      const tenant = world.tenants[i % world.tenants.length];
      return { tenantId: tenant.id, targetId: tenant.targetId, cron: null, dueAt: new Date(dueAt) };
    });
    const expected: ExpectedOccurrence[] = ids.map((scheduleId) => ({ scheduleId, at: dueAt }));
    const createSeconds = (Date.now() - seedStart) / 1000;
    console.log(
      `  ${ids.length} one-time jobs seeded in ${createSeconds.toFixed(1)} s; due at ${runAt}`,
    );
    if (Date.now() > dueAt - 1000) throw new Error('seeding ran past the due instant');
    await sleepUntil(dueAt - 1000);
    world.startMeter();
    await observe({
      label,
      sink,
      window: { from: dueAt, to: dueAt },
      expected: () => expected,
      drainMs: Math.max(60_000, size * 3),
      everyMs: 2000,
    });
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const verdict = await ledgerCheck(world.db.url, undeliveredOf(receipts, expected), (e) =>
      receivedCheck(sink.all())(e),
    );
    const delivery = withLedger(analyze(receipts, expected, { from: dueAt, to: dueAt }), verdict);
    const lastMs = delivery.lagMs?.max ?? null;
    const stages = await stageLags(world.db.url, { from: dueAt, to: dueAt + 1 });
    const logs = world.logSummary();
    const notes: string[] = [];
    if (stages) {
      notes.push(describeStages(stages));
      console.log(`  ${describeStages(stages)}`);
    }
    if (logs.errors > 0) notes.push(`service logged ${logs.errors} error line(s)`);
    const apiNote = world.apiNote();
    if (apiNote) notes.push(apiNote);
    return {
      scenario: 'burst',
      system: 'dueline',
      label,
      params: { size, tenants: flags.tenants },
      delivery: {
        ...delivery,
        // For a burst the rate is the drain rate: occurrences over the time to the last one.
        achievedPerSecond:
          lastMs && lastMs > 0 ? Math.round(delivery.delivered / (lastMs / 1000)) : 0,
      },
      resources,
      extra: {
        dueAt: runAt,
        seedSeconds: Math.round(createSeconds * 10) / 10,
        allDispatchedWithinMs: delivery.undelivered === 0 ? lastMs : null,
        stages,
        serviceLog: logs,
      },
      notes,
    };
  } finally {
    await world.close();
  }
}
