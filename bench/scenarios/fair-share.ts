import { analyze, firstAttemptsOf, type ExpectedOccurrence } from '../analysis';
import type { Tenant } from '../api-client';
import type { BenchContext, ScenarioResult } from '../context';
import { observe } from '../observe';
import { seedSchedules } from '../seed-sql';
import { sleepUntil } from '../workload';
import { SINGLE, World } from '../world';

/**
 * A small fleet that three floods saturate: 20 slots, fetched 5 at a time, none reserved for
 * high runs, and at most 20 admitted runs waiting in the queue before the fleet counts as
 * saturated (then the admitter shares the room that frees up by weight).
 */
const FAIR_ENV = {
  WORKER_CONCURRENCY: '20',
  WORKER_BATCH_SIZE: '5',
  WORKER_RESERVED_HIGH_SHARE: '0',
  ADMISSION_FLEET_BACKLOG: '20',
};
const WEIGHTS = [1, 1, 2];
/** Quotas that never bind here: the fleet is the limit, not the tenants' own budgets. */
const FAIR_QUOTAS = {
  maxActiveSchedules: 1_000_000,
  dispatchRatePerSecond: 1_000,
  maxConcurrentRuns: 500,
};

/**
 * noisy, fair share: three tenants of weights 1, 1, 2 each with --fair-runs one-time runs at one
 * instant, more than the fleet can run at once. Judged: each tenant's share of the deliveries
 * while all three still have a backlog (from the first second after the instant, the
 * admission's first batch, to the moment the first tenant's last run arrives) against its
 * weight's share (25 / 25 / 50 %); also the drain time.
 */
export async function runFairShare(ctx: BenchContext): Promise<ScenarioResult> {
  const { sink, flags } = ctx;
  sink.reset();
  const perTenant = flags.fairRuns;
  // Each call holds its worker slot this long (--fair-target-ms, default 20).
  const targetMs = flags.fairTargetMs;
  const label = `noisy: fair share, weights ${WEIGHTS.join('/')}, ${perTenant.toLocaleString('en')} runs each`;
  console.log(
    `\n== ${label} (fleet: ${FAIR_ENV.WORKER_CONCURRENCY} slots, ${targetMs} ms target, ` +
      `backlog ${FAIR_ENV.ADMISSION_FLEET_BACKLOG})`,
  );
  const world = await World.start(ctx, 'noisy-fair', SINGLE, { tenants: 0, env: FAIR_ENV });
  try {
    const tenants: Tenant[] = [];
    for (const [i, weight] of WEIGHTS.entries()) {
      tenants.push(
        await world.api.tenantWithTarget(`bench-fair-${i}-w${weight}`, sink.url('ours', targetMs), {
          ...FAIR_QUOTAS,
          weight,
        }),
      );
    }
    const total = perTenant * tenants.length;
    const at = Math.ceil((Date.now() + 6000 + total / 4) / 1000) * 1000;
    const ids = await seedSchedules(world.db.url, total, (i) => ({
      tenantId: tenants[i % tenants.length].id,
      targetId: tenants[i % tenants.length].targetId,
      cron: null,
      dueAt: new Date(at),
    }));
    if (Date.now() > at - 1000) throw new Error('seeding ran past the instant');
    const expected: ExpectedOccurrence[] = ids.map((scheduleId) => ({ scheduleId, at }));
    console.log(`  ${total} runs (${perTenant} per tenant) due ${new Date(at).toISOString()}`);
    await sleepUntil(at - 1000);
    world.startMeter();
    const slotsPerSecond = (Number(FAIR_ENV.WORKER_CONCURRENCY) * 1000) / targetMs;
    await observe({
      label,
      sink,
      window: { from: at, to: at },
      expected: () => expected,
      // At a tenth of the fleet's nominal rate, still bounded.
      drainMs: Math.max(60_000, (total / slotsPerSecond) * 10_000),
      everyMs: 5000,
    });
    const resources = world.meter.stop();
    const receipts = sink.all().filter((r) => r.system === 'ours');
    const byTenant = tenants.map((_, t) =>
      firstAttemptsOf(
        receipts,
        ids.filter((_, i) => i % tenants.length === t),
      ).map((r) => r.receivedAt),
    );
    const share = shareWhileBacklogged(byTenant, WEIGHTS, at);
    const last = byTenant.reduce((m, times) => Math.max(m, latest(times)), -Infinity);
    const drainMs = Number.isFinite(last) ? Math.round(last - at) : null;
    // Over the drain, so the row's runs per second is the fleet's drain rate.
    const delivery = analyze(receipts, expected, { from: at, to: Math.max(at + 1, last) });
    // Slots the calls kept busy on average in the span (Little's law: rate × call time).
    const busySlots = Math.round(((share.perSecond * targetMs) / 1000) * 10) / 10;
    // Each tenant's rank by id: the fair share breaks ties by tenant id.
    const byId = [...tenants].sort((a, b) => (a.id < b.id ? -1 : 1));
    const idRank = tenants.map((t) => byId.indexOf(t));
    const notes = [
      `shares while all three had a backlog (+${(share.fromMs / 1000).toFixed(1)} s to ` +
        `+${(share.toMs / 1000).toFixed(1)} s, ${share.deliveries} deliveries, ` +
        `${share.perSecond}/s): ${share.percent.map((p) => `${p} %`).join(' / ')} ` +
        `(weights ${WEIGHTS.join('/')}: ${share.expectedPercent.map((p) => `${p} %`).join(' / ')}); ` +
        `all ${total} drained ${drainMs === null ? '-' : `${(drainMs / 1000).toFixed(1)} s`} after the instant`,
    ];
    const finished = byTenant.map((times) => latest(times) - at);
    notes.push(
      `~${busySlots} of ${FAIR_ENV.WORKER_CONCURRENCY} slots busy in that span; ` +
        `tenants' rank by id ${idRank.join('/')}; ` +
        `each tenant's last delivery: ${finished.map((ms) => `+${(ms / 1000).toFixed(1)} s`).join(' / ')}; ` +
        `deliveries per ${TIMELINE_BUCKET_MS / 1000} s from the instant: ${timeline(byTenant, at)}`,
    );
    for (const note of notes) console.log(`  ${note}`);
    const logs = world.logSummary();
    if (logs.errors > 0) notes.push(`service logged ${logs.errors} error line(s)`);
    return {
      scenario: 'noisy',
      system: 'dueline',
      label,
      params: { phase: 'fair', weights: WEIGHTS, runsPerTenant: perTenant, fleet: FAIR_ENV },
      delivery,
      resources,
      extra: {
        sharePercent: share.percent,
        expectedSharePercent: share.expectedPercent,
        shareWindowMs: { from: share.fromMs, to: share.toMs },
        shareDeliveries: share.deliveries,
        shareDeliveriesPerSecond: share.perSecond,
        drainMs,
        targetMs,
        busySlots,
        idRank,
        serviceLog: logs,
      },
      notes,
    };
  } finally {
    await world.close();
  }
}

/**
 * Each tenant's share (percent, one decimal) of the deliveries between the first second after
 * the instant and the first tenant's last delivery, the span in which all of them had runs left.
 */
function shareWhileBacklogged(
  receivedAt: readonly number[][],
  weights: readonly number[],
  instant: number,
): {
  percent: number[];
  expectedPercent: number[];
  fromMs: number;
  toMs: number;
  deliveries: number;
  perSecond: number;
} {
  const from = instant + 1000;
  const to = receivedAt.reduce((m, times) => Math.min(m, latest(times)), Infinity);
  const counts = receivedAt.map((times) => times.filter((t) => t >= from && t <= to).length);
  const deliveries = counts.reduce((a, b) => a + b, 0);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    percent: counts.map((n) => (deliveries > 0 ? round((n / deliveries) * 100) : 0)),
    expectedPercent: weights.map((w) => round((w / weightSum) * 100)),
    fromMs: from - instant,
    toMs: Math.round(to - instant),
    deliveries,
    perSecond: to > from ? round(deliveries / ((to - from) / 1000)) : 0,
  };
}

const TIMELINE_BUCKET_MS = 10_000;

/** Deliveries per tenant in each bucket after the instant, e.g. `0-10 s 120/118/240, …`. */
function timeline(receivedAt: readonly number[][], instant: number): string {
  const buckets = new Map<number, number[]>();
  receivedAt.forEach((times, t) => {
    for (const time of times) {
      const b = Math.max(0, Math.floor((time - instant) / TIMELINE_BUCKET_MS));
      let counts = buckets.get(b);
      if (!counts) buckets.set(b, (counts = receivedAt.map(() => 0)));
      counts[t]++;
    }
  });
  const seconds = TIMELINE_BUCKET_MS / 1000;
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([b, counts]) => `${b * seconds}-${(b + 1) * seconds} s ${counts.join('/')}`)
    .join(', ');
}

/** The latest of `times`, -Infinity for none. */
function latest(times: readonly number[]): number {
  return times.reduce((m, t) => Math.max(m, t), -Infinity);
}
