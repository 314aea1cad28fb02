import { randomBytes } from 'node:crypto';
import {
  analyze,
  lagByInstant,
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
import type { Receipt } from '../sink';
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
  const repeat = flags.burstRepeat;
  const gapMs = flags.burstGapSeconds * 1000;
  const payload = payloadOf(flags.burstPayloadBytes);
  const label =
    `burst ${size.toLocaleString('en')}` +
    (repeat > 1 ? ` ×${repeat}, ${flags.burstGapSeconds} s apart` : '') +
    (flags.burstPayloadBytes > 0
      ? `, ${flags.burstPayloadBytes.toLocaleString('en')}-byte payloads`
      : '');
  console.log(
    `\n== ${label}: one-time jobs due at one instant` +
      (repeat > 1 ? `, ${repeat} instants with the service idle between them` : '') +
      `, ${flags.tenants} tenant(s)`,
  );
  const world = await World.start(ctx, 'burst', SINGLE, { tenants: flags.tenants });
  try {
    // Seeded with SQL, as the API's create leaves them (schedule row + due-index entry): creating
    // 100,000 jobs through the API would take longer than the burst, and only dispatch is measured.
    const seedStart = Date.now();
    // The seed's time: about 5,000 rows a second, and 10 MB of payloads a second.
    const seedMs = (size * repeat) / 5 + (size * repeat * flags.burstPayloadBytes) / 10_000;
    const dueAt = Math.ceil((Date.now() + 5000 + seedMs) / 1000) * 1000;
    const instants = Array.from({ length: repeat }, (_, k) => dueAt + k * gapMs);
    const lastDueAt = instants[instants.length - 1];
    const runAt = new Date(dueAt).toISOString();
    const instantOf = (i: number) => instants[Math.floor(i / size)];
    const ids = await seedSchedules(world.db.url, size * repeat, (i) => {
      const tenant = world.tenants[i % world.tenants.length];
      return {
        tenantId: tenant.id,
        targetId: tenant.targetId,
        cron: null,
        dueAt: new Date(instantOf(i)),
        payload,
      };
    });
    const expected: ExpectedOccurrence[] = ids.map((scheduleId, i) => ({
      scheduleId,
      at: instantOf(i),
    }));
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
      window: { from: dueAt, to: lastDueAt },
      expected: () => expected,
      drainMs: Math.max(60_000, size * 3),
      everyMs: 2000,
    });
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const verdict = await ledgerCheck(world.db.url, undeliveredOf(receipts, expected), (e) =>
      receivedCheck(sink.all())(e),
    );
    const delivery = withLedger(
      analyze(receipts, expected, { from: dueAt, to: lastDueAt }),
      verdict,
    );
    const lastMs = delivery.lagMs?.max ?? null;
    const stages = await stageLags(world.db.url, { from: dueAt, to: lastDueAt + 1 });
    const logs = world.logSummary();
    const notes: string[] = [];
    const perInstant = repeat > 1 ? describeInstants(receipts, expected, instants) : null;
    if (perInstant) {
      notes.push(perInstant);
      console.log(`  ${perInstant}`);
    }
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
      params: {
        size,
        tenants: flags.tenants,
        ...(repeat > 1 ? { repeat, gapSeconds: flags.burstGapSeconds } : {}),
      },
      delivery: {
        ...delivery,
        // For a burst the rate is the drain rate: occurrences over the time to the last one.
        achievedPerSecond:
          repeat === 1 && lastMs && lastMs > 0
            ? Math.round(delivery.delivered / (lastMs / 1000))
            : 0,
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

/** `#k p50/p99/max` of each instant's lag, in ms. */
function describeInstants(
  receipts: readonly Receipt[],
  expected: readonly ExpectedOccurrence[],
  instants: readonly number[],
): string {
  const ms = (v: number | undefined) => (v === undefined ? '-' : `${Math.round(v)}`);
  const parts = lagByInstant(receipts, expected, instants).map(
    ({ lag }, k) => `#${k + 1} ${ms(lag?.p50)}/${ms(lag?.p99)}/${ms(lag?.max)}`,
  );
  return `lag p50/p99/max by instant (ms): ${parts.join(', ')}`;
}

/**
 * A payload of about `bytes` bytes as JSON text ({} for 0): random base64, so Postgres cannot
 * compress it away in storage and every read pays for the whole of it. One for every job.
 */
function payloadOf(bytes: number): string {
  if (bytes <= 0) return '{}';
  const envelope = '{"blob":""}'.length;
  const chars = Math.max(0, bytes - envelope);
  const blob = randomBytes(Math.ceil((chars * 3) / 4))
    .toString('base64')
    .slice(0, chars);
  return JSON.stringify({ blob });
}
