import type { BenchContext, ScenarioResult } from '../context';
import { batchCreate, closedLoop, figuresOf, type LoadSample, singleCreate } from '../create-load';
import type { ResourceUsage } from '../resources';
import { seedIdleSchedules } from '../seed-sql';
import { SINGLE, World } from '../world';

/** The judged single-create windows alternate between the two tenants in this many rounds. */
const ROUNDS = 3;
/** Unjudged load on each tenant first: connection pools, JIT and index pages warm up. */
const WARMUP_SECONDS = 3;
const BATCH_SIZE = 1000;
/** Batches in flight at once: one is parsed and validated while the other's SQL runs. */
const BATCH_CLIENTS = 2;

/**
 * creates: what a create costs. POST /schedules from --create-clients (16) concurrent clients
 * for an empty tenant and for one that already has --schedules (1,000,000) schedules (seeded
 * with SQL, all due months ahead), in alternating rounds so drift over time hits both alike;
 * then POST /schedules/batch of 1,000 items from 2 clients. Every answer must be a 201.
 */
export async function runCreates(ctx: BenchContext): Promise<ScenarioResult[]> {
  const { flags } = ctx;
  const clients = flags.createClients;
  const seconds = flags.createSeconds;
  const background = flags.scaleSchedules;
  console.log(
    `\n== creates: ${clients} clients, ${seconds}s per tenant (empty vs ` +
      `${background.toLocaleString('en')} schedules), then batches of ${BATCH_SIZE} for ${seconds}s`,
  );
  const world = await World.start(ctx, 'creates', SINGLE, { tenants: 3 });
  try {
    const [empty, big, batch] = world.tenants;
    const seedStart = Date.now();
    await seedIdleSchedules(
      world.db.url,
      background,
      { tenantId: big.id, targetId: big.targetId },
      (done) => {
        if (done % 200_000 === 0 || done === background) {
          console.log(`  seeded ${done.toLocaleString('en')}/${background.toLocaleString('en')}`);
        }
      },
    );
    console.log(`  seeding took ${((Date.now() - seedStart) / 1000).toFixed(1)} s`);
    const url = world.apiUrl;
    for (const tenant of [empty, big]) {
      await closedLoop(clients, WARMUP_SECONDS, singleCreate(url, tenant));
    }
    world.startMeter();
    const samples: { empty: LoadSample[]; big: LoadSample[] } = { empty: [], big: [] };
    for (let round = 0; round < ROUNDS; round++) {
      samples.empty.push(await closedLoop(clients, seconds / ROUNDS, singleCreate(url, empty)));
      samples.big.push(await closedLoop(clients, seconds / ROUNDS, singleCreate(url, big)));
      const last = (list: LoadSample[]) => figuresOf(list.slice(-1));
      console.log(
        `  round ${round + 1}/${ROUNDS}: empty ${describe(last(samples.empty))}; ` +
          `${background.toLocaleString('en')} ${describe(last(samples.big))}`,
      );
    }
    const singleResources = world.meter.stop();

    await closedLoop(BATCH_CLIENTS, 1, batchCreate(url, batch, BATCH_SIZE));
    world.startMeter();
    const batches = await closedLoop(BATCH_CLIENTS, seconds, batchCreate(url, batch, BATCH_SIZE));
    const batchResources = world.meter.stop();
    const batchFigures = figuresOf([batches]);
    console.log(
      `  batches: ${describe(batchFigures)}, ${batchFigures.schedulesPerSecond} schedules/s`,
    );

    const logs = world.logSummary();
    const notes = logs.errors > 0 ? [`service logged ${logs.errors} error line(s)`] : [];
    const singles = [...samples.empty, ...samples.big];
    const singleCreates = singles.reduce((n, s) => n + s.created, 0);
    // The two single-create rows share one meter: their windows alternate.
    const row = (
      label: string,
      params: Record<string, unknown>,
      figures: ReturnType<typeof figuresOf>,
      resources: ResourceUsage,
      extra: Record<string, unknown> = {},
    ): ScenarioResult => ({
      scenario: 'creates',
      system: 'dueline',
      label,
      params,
      delivery: null,
      resources,
      extra: { ...figures, ...extra },
      notes: figures.firstError ? [`first refusal: ${figures.firstError}`] : [],
    });
    const cpuMs = (r: ResourceUsage, n: number) =>
      Math.round(((r.service.cpuSeconds + (r.postgres.cpuSeconds ?? 0)) / n) * 1e5) / 100;
    const results = [
      row(
        'creates: single, empty tenant',
        { mode: 'single', tenantSchedules: 0, clients },
        figuresOf(samples.empty),
        singleResources,
        { cpuMsPerSchedule: cpuMs(singleResources, singleCreates) },
      ),
      row(
        `creates: single, ${background.toLocaleString('en')}-schedule tenant`,
        { mode: 'single', tenantSchedules: background, clients },
        figuresOf(samples.big),
        singleResources,
        { cpuMsPerSchedule: cpuMs(singleResources, singleCreates) },
      ),
      row(
        `creates: batches of ${BATCH_SIZE.toLocaleString('en')}`,
        { mode: 'batch', batchSize: BATCH_SIZE, clients: BATCH_CLIENTS },
        batchFigures,
        batchResources,
        { cpuMsPerSchedule: cpuMs(batchResources, batches.created) },
      ),
    ];
    results[results.length - 1].notes.push(...notes);
    return results;
  } finally {
    await world.close();
  }
}

function describe(f: ReturnType<typeof figuresOf>): string {
  const p = f.latencyMs;
  return (
    `${f.requestsPerSecond} req/s, p50 ${p?.p50 ?? '-'} ms, p99 ${p?.p99 ?? '-'} ms` +
    (f.failed ? `, ${f.failed} failed` : '')
  );
}
