import type { BenchContext, ScenarioResult } from '../context';
import type { BenchDatabase } from '../postgres';
import { seedIdleSchedules, seedTenant } from '../seed-sql';
import type { ReplicaSpec } from '../world';
import { steadyRun } from './steady-run';

/** The poller in a process of its own, so its cost is read apart from the rest. */
const POLLER_APART: ReplicaSpec[] = [
  { name: 'dueline', roles: 'api,relay,worker' },
  { name: 'poller', roles: 'poller' },
];

const COMPARISON_SCHEDULES = 10_000;
/**
 * Judged after this much load: right after a million rows are seeded, Postgres reads their
 * index pages cold, and the first ~10 s of the load ran at twice the later p99 (at 10,000 too,
 * less so). Both sizes get the same warm-up.
 */
const WARMUP_SECONDS = 20;

/**
 * scale: the same small due load (--scale-rate, default 50/s) with 10,000 and then 1,000,000
 * (--scale-schedules) other active schedules present. Those are seeded with SQL before the
 * replicas start (the API would take hours), each with its due-index row, all due between 2 and
 * 300 days from now, so none is due during the run: lag and the poller's CPU must not move.
 */
export async function runScale(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const background of [COMPARISON_SCHEDULES, ctx.flags.scaleSchedules]) {
    results.push(
      await steadyRun(ctx, {
        scenario: 'scale',
        label: `scale ${background.toLocaleString('en')} schedules`,
        rate: ctx.flags.scaleRate,
        seconds: ctx.flags.seconds,
        warmupSeconds: WARMUP_SECONDS,
        replicas: POLLER_APART,
        beforeServices: (db) => seedBackground(db, background),
        params: { backgroundSchedules: background },
      }),
    );
  }
  return results;
}

async function seedBackground(db: BenchDatabase, count: number): Promise<void> {
  const started = Date.now();
  const tenant = await seedTenant(db.url, 'bench-background');
  await seedIdleSchedules(db.url, count, tenant, (done) => {
    if (done % 100_000 === 0 || done === count) {
      console.log(`  seeded ${done.toLocaleString('en')}/${count.toLocaleString('en')}`);
    }
  });
  console.log(`  seeding took ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
