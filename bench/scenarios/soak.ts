import { Client } from 'pg';
import {
  analyze,
  firstReceipts,
  lagStats,
  occurrenceKey,
  receivedCheck,
  undeliveredOf,
  withLedger,
} from '../analysis';
import type { BenchContext, ScenarioResult, SoakFlags } from '../context';
import { ledgerCheck } from '../ledger-check';
import { fmt } from '../observe';
import { describeCost, runsDeliveredBetween } from '../occurrence-cost';
import { readRelations } from '../relation-stats';
import {
  emptyMemory,
  growth,
  intervalLags,
  plateau,
  recovery,
  soakSpans,
  spanLag,
  summarizeRelations,
  totalBytes,
  type Delivered,
  type SoakPhase,
  type SoakSample,
} from '../soak-analysis';
import type { OccurrenceCost } from '../cost-arithmetic';
import { DEFAULT_STEADY, SteadyWorkload, sleepUntil } from '../workload';
import { SINGLE, World } from '../world';

const SQL_SEED_LEAD_MS = 15_000;
const DRAIN_MS = 30_000;
/** The "reporting query" of the held transaction: reads a table the service never locks hard. */
const HOLD_QUERY = 'SELECT count(*) AS n FROM schedules';

/**
 * soak: a steady cron load for long enough that retention (shortened to minutes through the
 * history env knobs) drops several partitions; one sample per interval of every relation's size,
 * dead tuples and autovacuum counters, and of the lag. Then a REPEATABLE READ transaction holds
 * back the xmin horizon on another connection for --hold-seconds, then the load runs on for
 * --recovery-seconds. Judged: the sizes plateau over the steady phase, its last interval's p99
 * is within 20 % of its second's (the first is the cold start), and after the transaction ends
 * dead tuples and p99 come back.
 */
export async function runSoak(ctx: BenchContext): Promise<ScenarioResult[]> {
  const f = ctx.flags.soak;
  const interval = f.intervalSeconds * 1000;
  const phases = phaseIntervals(f);
  const seconds = (phases.steady + phases.held + phases.recovery) * f.intervalSeconds;
  const label = `soak ${f.rate}/s, ${f.retentionMinutes}-min retention`;
  console.log(
    `\n== ${label}: ${phases.steady * f.intervalSeconds}s steady, ${phases.held * f.intervalSeconds}s ` +
      `with a REPEATABLE READ transaction open, ${phases.recovery * f.intervalSeconds}s recovery; ` +
      `partitions ${f.partitionMinutes} min, maintenance every ${f.maintenanceMs} ms`,
  );
  ctx.sink.reset();
  const world = await World.start(ctx, 'soak', SINGLE, {
    tenants: ctx.flags.tenants,
    env: {
      HISTORY_PARTITION_MINUTES: String(f.partitionMinutes),
      HISTORY_RETENTION_OVERRIDE_MINUTES: String(f.retentionMinutes),
      HISTORY_MAINTENANCE_INTERVAL_MS: String(f.maintenanceMs),
    },
  });
  const stats = new Client({ connectionString: world.db.url });
  await stats.connect();
  let hold: HeldTransaction | null = null;
  try {
    // Cron only: one-time jobs would leave a schedule row each and the schedules table would grow.
    const workload = new SteadyWorkload(world.api, world.tenants, {
      ...DEFAULT_STEADY,
      cronShare: 1,
      rate: f.rate,
      seconds,
    });
    const windowStart = Math.ceil((Date.now() + SQL_SEED_LEAD_MS) / 1000) * 1000;
    await workload.seedSql(world.db.url, windowStart);
    console.log(
      `  ${workload.cronSchedules} cron schedules seeded; window opens ${new Date(windowStart).toISOString()}`,
    );
    await sleepUntil(windowStart);
    world.startMeter();
    const costMeter = world.costMeter();
    await costMeter.start();
    let cost: OccurrenceCost | null = null;

    const memory = emptyMemory();
    const samples: SoakSample[] = [];
    const total = phases.steady + phases.held + phases.recovery;
    let holdInfo: { xmin: string | null; rows: number } | null = null;
    for (let i = 1; i <= total; i++) {
      const phase: SoakPhase =
        i <= phases.steady ? 'steady' : i <= phases.steady + phases.held ? 'held' : 'recovery';
      if (phase === 'held' && !hold) {
        hold = await HeldTransaction.open(world.db.url);
        holdInfo = hold.info;
        console.log(
          `  REPEATABLE READ transaction open (backend xmin ${holdInfo.xmin ?? '?'}, read ${holdInfo.rows} schedules)`,
        );
      }
      if (phase === 'recovery' && hold) {
        await hold.close();
        hold = null;
        console.log('  REPEATABLE READ transaction committed');
      }
      const from = windowStart + (i - 1) * interval;
      await sleepUntil(from + interval);
      if (i === phases.steady) {
        const receipts = ctx.sink.all().filter((r) => r.system === 'ours');
        cost = await costMeter.stop(
          runsDeliveredBetween(receipts, windowStart, from + interval),
          world.meter.stop().service.cpuSeconds,
        );
        console.log(`  steady phase ${describeCost(cost)}`);
      }
      const received = ctx.sink
        .all()
        .filter(
          (r) => r.system === 'ours' && r.receivedAt >= from && r.receivedAt < from + interval,
        );
      const sample: SoakSample = {
        t: (i * interval) / 1000,
        phase,
        relations: summarizeRelations(await readRelations(stats), memory),
        lag: lagStats(received.map((r) => r.receivedAt - r.scheduledAt)),
        received: received.length,
      };
      samples.push(sample);
      console.log(describeSample(sample, f.intervalSeconds));
    }
    const windowEnd = windowStart + seconds * 1000;
    await drain(ctx, workload, windowStart, windowEnd);
    const resources = world.meter.stop();
    return [
      await judge(ctx, world, {
        workload,
        windowStart,
        windowEnd,
        interval,
        phases,
        samples,
        cost,
        resources,
        holdInfo,
        label,
      }),
    ];
  } finally {
    await hold?.close().catch(() => undefined);
    await stats.end().catch(() => undefined);
    await world.close();
  }
}

/** Whole intervals per phase (each phase rounded up to a multiple of the interval). */
function phaseIntervals(f: SoakFlags): Record<SoakPhase, number> {
  const n = (s: number) => Math.max(1, Math.ceil(s / f.intervalSeconds));
  return {
    steady: Math.max(3, n(f.steadySeconds)),
    held: n(f.holdSeconds),
    recovery: n(f.recoverySeconds),
  };
}

/** A reporting transaction on its own connection whose snapshot holds back the xmin horizon. */
class HeldTransaction {
  private constructor(
    private readonly client: Client,
    readonly info: { xmin: string | null; rows: number },
  ) {}

  static async open(url: string): Promise<HeldTransaction> {
    const client = new Client({ connectionString: url, application_name: 'bench-soak-reporting' });
    await client.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    // The first query takes the transaction's snapshot; it is kept until COMMIT.
    const read = await client.query<{ n: string }>(HOLD_QUERY);
    const xmin = await client.query<{ xmin: string | null }>(
      'SELECT backend_xmin::text AS xmin FROM pg_stat_activity WHERE pid = pg_backend_pid()',
    );
    return new HeldTransaction(client, {
      xmin: xmin.rows[0]?.xmin ?? null,
      rows: Number(read.rows[0].n),
    });
  }

  async close(): Promise<void> {
    try {
      await this.client.query('COMMIT');
    } finally {
      await this.client.end();
    }
  }
}

async function drain(
  ctx: BenchContext,
  workload: SteadyWorkload,
  windowStart: number,
  windowEnd: number,
): Promise<void> {
  const deadline = Date.now() + DRAIN_MS;
  const expected = workload.expected(windowStart, windowEnd);
  while (Date.now() < deadline) {
    if (undeliveredOf(ctx.sink.all(), expected).length === 0) return;
    await new Promise((done) => setTimeout(done, 500));
  }
}

const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)}`;

function describeSample(s: SoakSample, intervalSeconds: number): string {
  const r = s.relations;
  const roots = Object.entries(r.byRoot)
    .sort(([, a], [, b]) => totalBytes(b) - totalBytes(a))
    .slice(0, 4)
    .map(
      ([name, x]) =>
        `${name} ${mb(x.tableBytes)}+${mb(x.indexBytes)}` +
        (x.partitions ? `/${x.partitions}p` : ''),
    )
    .join(', ');
  const lastAv =
    r.lastAutovacuum === null
      ? 'never'
      : `${Math.round((Date.now() - r.lastAutovacuum) / 1000)}s ago`;
  return (
    `  [soak ${s.phase}] t=${s.t}s recv=${s.received} (${Math.round(s.received / intervalSeconds)}/s) ` +
    `lag p50/p99=${s.lag ? `${fmt(s.lag.p50)}/${fmt(s.lag.p99)}` : '-'} | ` +
    `MB table+index ${mb(r.tableBytes)}+${mb(r.indexBytes)} (${roots}) | ` +
    `partitions dropped ${r.partitionsDropped} | dead ${r.deadTuples} live ${r.liveTuples} | ` +
    `autovacuum +${r.autovacuums} analyze +${r.autoanalyzes} last ${lastAv}`
  );
}

interface Judged {
  workload: SteadyWorkload;
  windowStart: number;
  windowEnd: number;
  interval: number;
  phases: Record<SoakPhase, number>;
  samples: SoakSample[];
  cost: OccurrenceCost | null;
  resources: ReturnType<World['meter']['stop']>;
  holdInfo: { xmin: string | null; rows: number } | null;
  label: string;
}

async function judge(ctx: BenchContext, world: World, j: Judged): Promise<ScenarioResult> {
  const receipts = ctx.sink.all().filter((r) => r.system === 'ours');
  const judgedWindow = { from: j.windowStart + 1000, to: j.windowEnd - 1000 };
  const expected = j.workload.expected(judgedWindow.from, judgedWindow.to);
  const verdict = await ledgerCheck(world.db.url, undeliveredOf(receipts, expected), (e) =>
    receivedCheck(ctx.sink.all())(e),
  );
  const delivery = withLedger(analyze(receipts, expected, judgedWindow), verdict);
  const first = firstReceipts(receipts);
  const delivered: Delivered[] = [];
  for (const e of j.workload.expected(j.windowStart, j.windowEnd)) {
    const at = first.get(occurrenceKey(e.scheduleId, e.at));
    if (at !== undefined) delivered.push({ at: e.at, receivedAt: at });
  }
  const total = j.phases.steady + j.phases.held + j.phases.recovery;
  const lags = intervalLags(delivered, j.windowStart, j.interval, total);
  const spans = soakSpans(j.phases);
  const spanP99 = ([first, end]: [number, number]) =>
    spanLag(delivered, j.windowStart, j.interval, first, end)?.p99 ?? Infinity;
  const steadySamples = j.samples.filter((s) => s.phase === 'steady');
  const sizes = plateau(steadySamples.map((s) => totalBytes(s.relations)));
  // The first interval holds the cold start (first fires, caches, pool connections): the
  // baseline is the first third after it, pooled (see spanLag).
  const lagGrowth = growth(spanP99(spans.steadyFirst), spanP99(spans.steadyLast));
  const held = j.samples.filter((s) => s.phase === 'held');
  const heldLags = lags.slice(j.phases.steady, j.phases.steady + j.phases.held);
  const back = recovery(j.samples, {
    beforeHold: spanP99(spans.steadyLast),
    atEnd: spanP99(spans.recovered),
  });
  const sizeAt = (s: SoakSample | undefined) => (s ? totalBytes(s.relations) : 0);
  const holdEffect = {
    p99BeforeMs: spanP99(spans.steadyLast),
    p99WorstWhileHeldMs: Math.max(...heldLags.map((l) => l?.p99 ?? 0)),
    deadBefore: steadySamples[steadySamples.length - 1]?.relations.deadTuples ?? 0,
    deadPeakWhileHeld: Math.max(0, ...held.map((s) => s.relations.deadTuples)),
    bytesGrowthWhileHeld:
      sizeAt(held[held.length - 1]) - sizeAt(steadySamples[steadySamples.length - 1]),
    xmin: j.holdInfo?.xmin ?? null,
  };
  const last = j.samples[j.samples.length - 1];
  const notes = [
    `${last?.relations.partitionsDropped ?? 0} partition(s) dropped during the run`,
    `held transaction: p99 ${fmt(holdEffect.p99BeforeMs)} before (steady last third), worst ${fmt(holdEffect.p99WorstWhileHeldMs)} while held; ` +
      `dead tuples ${holdEffect.deadBefore} before, peak ${holdEffect.deadPeakWhileHeld} while held; ` +
      `relations +${mb(holdEffect.bytesGrowthWhileHeld)} MB while held`,
  ];
  for (const n of notes) console.log(`  ${n}`);
  return {
    scenario: 'soak',
    system: 'dueline',
    label: j.label,
    params: {
      ...ctx.flags.soak,
      phases: Object.fromEntries(
        Object.entries(j.phases).map(([k, v]) => [k, v * ctx.flags.soak.intervalSeconds]),
      ),
      cronSchedules: j.workload.cronSchedules,
    },
    delivery,
    resources: j.resources,
    extra: {
      cost: j.cost,
      plateau: sizes,
      lagGrowth,
      intervalP99Ms: lags.map((l) => l?.p99 ?? null),
      holdEffect,
      recovery: back,
      samples: j.samples.map((s) => ({
        t: s.t,
        phase: s.phase,
        received: s.received,
        lagP99Ms: s.lag?.p99 ?? null,
        tableBytes: s.relations.tableBytes,
        indexBytes: s.relations.indexBytes,
        deadTuples: s.relations.deadTuples,
        liveTuples: s.relations.liveTuples,
        autovacuums: s.relations.autovacuums,
        partitionsDropped: s.relations.partitionsDropped,
        byRoot: s.relations.byRoot,
      })),
    },
    notes,
  };
}
