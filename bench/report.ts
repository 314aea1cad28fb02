import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { ScenarioResult, TargetCheck } from './context';
import { renderCost } from './cost-report';
import { renderSoak, soakChecks } from './soak-report';
import type { ResourceUsage } from './resources';

export interface Machine {
  nproc: number;
  cpuModel: string;
  memoryGiB: number;
  node: string;
  postgres: string;
  redis: string | null;
}

export function describeMachine(postgresVersion: string): Machine {
  const model = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
  let redis: string | null;
  try {
    redis = execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    redis = null;
  }
  return {
    nproc: cpus().length,
    cpuModel: model ? model[1].trim() : (cpus()[0]?.model ?? 'unknown'),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    postgres: postgresVersion.split(' on ')[0],
    redis,
  };
}

const ms = (v: number | undefined | null) =>
  v === undefined || v === null
    ? '-'
    : v >= 1000
      ? `${(v / 1000).toFixed(2)} s`
      : `${v.toFixed(1)} ms`;
const num = (v: number | undefined | null) => (v === undefined || v === null ? '-' : String(v));

/**
 * The best dispatch rate dueline showed in this run, and where: a burst's drain rate when a burst
 * ran (the purest throughput figure), else the best steady-type rate.
 */
export function oursBest(
  results: readonly ScenarioResult[],
): { perSecond: number; from: string } | null {
  const ours = results.filter(
    (r) => r.system === 'dueline' && r.delivery && r.scenario !== 'peers',
  );
  const bursts = ours.filter((r) => r.scenario === 'burst');
  const pool = bursts.length > 0 ? bursts : ours;
  let best: { perSecond: number; from: string } | null = null;
  for (const r of pool) {
    const rate = r.delivery!.achievedPerSecond;
    if (!best || rate > best.perSecond) best = { perSecond: rate, from: r.label };
  }
  return best;
}

/** Pass/fail for every target of the issue whose scenario ran. */
export function checkTargets(results: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const ours = results.filter((r) => r.system === 'dueline' && r.delivery);
  if (ours.length > 0) {
    const bad = ours.filter(
      (r) => r.delivery!.early > 0 || r.delivery!.duplicates > 0 || r.delivery!.lost > 0,
    );
    checks.push({
      target: '0 early, 0 duplicates, 0 lost in every scenario',
      pass: bad.length === 0,
      measured: bad.length
        ? bad
            .map(
              (r) =>
                `${r.label}: early ${r.delivery!.early}, dup ${r.delivery!.duplicates}, lost ${r.delivery!.lost}`,
            )
            .join('; ')
        : `${ours.length} scenario run(s) clean`,
    });
  }
  checks.push(...throughputChecks(ours));
  const scale = ours.filter((r) => r.scenario === 'scale');
  const small = scale.find((r) => r.params.backgroundSchedules === 10_000);
  const big = scale.find((r) => (r.params.backgroundSchedules as number) > 10_000);
  if (small && big) {
    const a = small.delivery!.lagMs?.p99 ?? Infinity;
    const b = big.delivery!.lagMs?.p99 ?? Infinity;
    checks.push({
      target: `${(big.params.backgroundSchedules as number).toLocaleString('en')} schedules: p99 within 20% of the 10,000 figure`,
      pass: b <= a * 1.2,
      measured: `p99 ${ms(b)} vs ${ms(a)} (${((b / a - 1) * 100).toFixed(0)}%)`,
    });
    const memory = serviceMemory(big.resources);
    checks.push({
      target: `${(big.params.backgroundSchedules as number).toLocaleString('en')} schedules: service RSS ≤ 300 MB`,
      pass: memory.judged <= 300,
      measured: `${memory.described} (largest replica)`,
    });
  }
  checks.push(...noisyChecks(results));
  checks.push(...createChecks(results));
  checks.push(...soakChecks(results));
  const ceiling = results.find((r) => r.scenario === 'ceiling');
  const best = oursBest(results);
  if (ceiling && best) {
    const top = ceiling.extra.ceilingPerSecond as number;
    const share = (best.perSecond / top) * 100;
    checks.push({
      target: '≥ 50% of the SQL ceiling',
      pass: share >= 50,
      measured: `${best.perSecond}/s (${best.from}) = ${share.toFixed(1)}% of ${top}/s`,
    });
  }
  return checks;
}

/**
 * The throughput issue's targets: steady 200/s within 100 ms; steady 1,000/s at p99 ≤ 150 ms and
 * p50 ≤ 50 ms; steady 2,000/s sustained (the whole window) at p99 ≤ 1 s with nothing left
 * behind; a 10,000-run instant delivered within 2.5 s and a 100,000-run instant within 25 s, the
 * service's processes together at most 400 MB resident, nothing lost or early.
 */
function throughputChecks(ours: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  const steady: Array<{ rate: number; p99: number; p50?: number }> = [
    { rate: 200, p99: 100 },
    { rate: 1000, p99: 150, p50: 50 },
    { rate: 2000, p99: 1000 },
  ];
  for (const { rate, p99: p99Limit, p50: p50Limit } of steady) {
    const row = ours.find((r) => r.scenario === 'steady' && r.params.rate === rate);
    if (!row) continue;
    const delivery = row.delivery!;
    const p99 = delivery.lagMs?.p99 ?? Infinity;
    const p50 = delivery.lagMs?.p50 ?? Infinity;
    const behind = delivery.undelivered;
    checks.push({
      target:
        `steady ${rate}/s for ${row.params.seconds} s` +
        (row.params.warmupSeconds ? ` after ${row.params.warmupSeconds} s of warm-up` : '') +
        `: p99 lag ≤ ${ms(p99Limit)}` +
        (p50Limit === undefined ? '' : `, p50 ≤ ${ms(p50Limit)}`) +
        ', nothing left behind',
      pass: p99 <= p99Limit && (p50Limit === undefined || p50 <= p50Limit) && behind === 0,
      measured:
        `p50 ${ms(p50)}, p99 ${ms(p99)}` +
        (behind ? `, ${behind} not delivered within the drain` : ', all delivered'),
    });
  }
  for (const { size, limitMs, rssMb } of [
    { size: 10_000, limitMs: 2_500, rssMb: null },
    { size: 100_000, limitMs: 25_000, rssMb: 400 },
  ]) {
    // One instant of that size (a repeated burst's instants are judged apart, not here).
    const burst = ours.find(
      (r) => r.scenario === 'burst' && r.params.size === size && r.params.repeat === undefined,
    );
    if (!burst) continue;
    const delivery = burst.delivery!;
    const within = burst.extra.allDispatchedWithinMs as number | null;
    const memory = serviceMemory(burst.resources);
    const clean = delivery.lost === 0 && delivery.early === 0;
    checks.push({
      target:
        `${size.toLocaleString('en')}-run instant delivered within ${ms(limitMs)}` +
        (rssMb === null ? '' : `, service RSS ≤ ${rssMb} MB`) +
        ', nothing lost or early',
      pass:
        within !== null && within <= limitMs && clean && (rssMb === null || memory.judged <= rssMb),
      measured:
        (within === null
          ? `${delivery.undelivered} not delivered within the drain`
          : `last one after ${ms(within)}`) +
        (rssMb === null ? '' : `, ${memory.described} (all service processes)`) +
        `, lost ${delivery.lost}, early ${delivery.early}`,
    });
  }
  return checks;
}

/**
 * A service's peak resident memory as its bounds judge it: with the pages its processes share (the
 * node binary, ~50 MB) counted once, the summed resident sets printed beside. Results written
 * before the shared-once figure was measured are judged by the sum.
 */
function serviceMemory(resources: ResourceUsage | null | undefined): {
  judged: number;
  described: string;
} {
  const sum = resources?.service.peakRssMb;
  const once = resources?.service.peakResidentOnceMb;
  if (sum === undefined) return { judged: Infinity, described: 'peak RSS -' };
  if (once === undefined) return { judged: sum, described: `peak RSS ${sum} MB` };
  return {
    judged: once,
    described: `peak RSS ${once} MB with shared pages counted once (${sum} MB summed over processes)`,
  };
}

/** One flooding tenant's figures, as the noisy isolation rows carry them. */
interface FloodFigures {
  size: number;
  delivered: number;
  drainPerSecond: number;
  early: number;
}

const noisyPhase = (r: ScenarioResult, phase: string) =>
  r.scenario === 'noisy' && r.params.phase === phase;

/**
 * Tenant isolation (issue 11): beside a flood, and with 1,000 tenants beside two floods, the
 * quiet tenants' p99 stays within 100 ms and within twice the same load's alone, nothing lost or
 * early; a rate-limited flood drains at >= 90 % of its quota; three floods of weights 1, 1, 2 on
 * a saturated fleet get 25 / 25 / 50 % (+-10 points) of the deliveries; priority-high runs beside
 * a flood that saturates the fleet keep a p99 within 100 ms.
 */
function noisyChecks(results: readonly ScenarioResult[]): TargetCheck[] {
  return [
    ...isolationChecks(results, 'flood'),
    ...isolationChecks(results, 'many'),
    ...fairShareChecks(results),
    ...reservedChecks(results),
  ];
}

function isolationChecks(
  results: readonly ScenarioResult[],
  phase: 'flood' | 'many',
): TargetCheck[] {
  const rows = results.filter((r) => noisyPhase(r, phase));
  const base = rows.find((r) => r.params.floods === 0);
  const flooded = rows.find((r) => (r.params.floods as number) > 0);
  if (!base || !flooded) return [];
  const a = base.delivery!.lagMs?.p99 ?? Infinity;
  const b = flooded.delivery!.lagMs?.p99 ?? Infinity;
  const floods = flooded.extra.floods as FloodFigures[];
  const quota = flooded.extra.floodQuotaPerSecond as number;
  const floodSize = (flooded.params.flood as number).toLocaleString('en');
  const d = flooded.delivery!;
  const quietClean = d.undelivered === 0 && d.early === 0;
  const floodsClean = floods.every((f) => f.delivered === f.size && f.early === 0);
  const checks: TargetCheck[] = [];
  const beside =
    phase === 'flood'
      ? `beside a ${floodSize}-run flood`
      : `${(flooded.params.quietTenants as number).toLocaleString('en')} tenants beside ${floods.length === 2 ? 'two' : floods.length} ${floodSize}-run floods`;
  checks.push({
    target: `${beside}: quiet tenants' p99 ≤ 100 ms and ≤ 2× alone, none lost or early`,
    pass: b <= 100 && b <= 2 * a && quietClean && (phase === 'flood' || floodsClean),
    measured:
      `p99 ${ms(b)} beside the flood${floods.length > 1 ? 's' : ''} vs ${ms(a)} alone ` +
      `(${String(flooded.params.quietRuns)} quiet runs over the drain${firstStretchFigure(base, flooded)}), ` +
      `${d.undelivered} not delivered, ${d.early} early` +
      (phase === 'many'
        ? `; floods ${floods.map((f) => `${f.delivered}/${f.size}`).join(', ')} delivered, ${floods.reduce((n, f) => n + f.early, 0)} early`
        : ''),
  });
  if (phase === 'flood') {
    const [f] = floods;
    checks.push({
      target: 'a rate-limited flood drains at ≥ 90% of its dispatchRatePerSecond',
      pass: f.drainPerSecond >= 0.9 * quota && floodsClean,
      measured: `${f.drainPerSecond}/s of ${quota}/s (${((f.drainPerSecond / quota) * 100).toFixed(1)}%), ${f.delivered}/${f.size} delivered, ${f.early} early`,
    });
  }
  return checks;
}

/**
 * The quiet p99 of the window's first ten seconds beside / alone (printed, not judged): where a
 * flood's backlog is written; empty for results written before it was measured.
 */
function firstStretchFigure(base: ScenarioResult, flooded: ScenarioResult): string {
  const p99 = (r: ScenarioResult) =>
    (r.extra.firstStretch as { lagMs: { p99: number } | null } | undefined)?.lagMs?.p99;
  const [a, b] = [p99(base), p99(flooded)];
  return a === undefined || b === undefined ? '' : `; its first 10 s ${ms(b)} vs ${ms(a)}`;
}

function fairShareChecks(results: readonly ScenarioResult[]): TargetCheck[] {
  const row = results.find((r) => noisyPhase(r, 'fair'));
  if (!row) return [];
  const share = row.extra.sharePercent as number[];
  const expected = row.extra.expectedSharePercent as number[];
  const window = row.extra.shareWindowMs as { from: number; to: number };
  const drain = row.extra.drainMs as number | null;
  const d = row.delivery!;
  const within = share.every((p, i) => Math.abs(p - expected[i]) <= 10);
  const seconds = (v: number) => (Number.isFinite(v) ? `${(v / 1000).toFixed(1)} s` : '-');
  return [
    {
      target: `floods of weights ${(row.params.weights as number[]).join('/')} on a saturated fleet: deliveries ${expected.map((p) => `${p}`).join(' / ')} % ± 10 points`,
      pass:
        within && (row.extra.shareDeliveries as number) > 0 && d.undelivered === 0 && d.early === 0,
      measured:
        `${share.map((p) => `${p}`).join(' / ')} % of ${String(row.extra.shareDeliveries)} deliveries ` +
        `(+${seconds(window.from)} to +${seconds(window.to)}), all ${d.expected} drained in ` +
        `${drain === null ? '-' : seconds(drain)}, ${d.undelivered} not delivered, ${d.early} early`,
    },
  ];
}

function reservedChecks(results: readonly ScenarioResult[]): TargetCheck[] {
  const row = results.find((r) => noisyPhase(r, 'reserved'));
  if (!row) return [];
  const d = row.delivery!;
  const p99 = d.lagMs?.p99 ?? Infinity;
  const x = row.extra;
  const floodLag = x.floodLagMs as { p50: number } | null;
  const floodSize = row.params.flood as number;
  const saturated = x.saturatedThroughout === true;
  const floodClean = x.floodDelivered === floodSize && x.floodEarly === 0;
  return [
    {
      target:
        'priority-high runs beside a flood saturating the fleet: p99 ≤ 100 ms, none lost or early',
      pass: p99 <= 100 && d.undelivered === 0 && d.early === 0 && saturated && floodClean,
      measured:
        `p99 ${ms(p99)} (p50 ${ms(d.lagMs?.p50)}) over ${d.expected} high runs; flood lag p50 ` +
        `${ms(floodLag?.p50)}, ${String(x.floodPerSecondInWindow)}/s of ${String(x.floodCapacityPerSecond)}/s ` +
        `(~${String(x.floodBusySlots)} normal slots busy) meanwhile, ` +
        `${saturated ? 'backlogged throughout' : 'NOT backlogged throughout (not saturated)'}, ` +
        `${String(x.floodDelivered)}/${floodSize} delivered, ${String(x.floodEarly)} early`,
    },
  ];
}

/** The creates scenario's figures, as its rows carry them. */
interface CreateFigures {
  ok: number;
  failed: number;
  requestsPerSecond: number;
  schedulesPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number; max: number } | null;
  cpuMsPerSchedule?: number;
}

const createFigures = (r: ScenarioResult) => r.extra as unknown as CreateFigures;

/**
 * The quota issue's targets: single creates from 16 clients at >= 500/s for an empty tenant and
 * for one with 1,000,000 schedules, whose throughput and p99 are within 20 % of the empty
 * tenant's; batch creates at >= 5,000 schedules/s. A run with refused creates fails its target.
 */
function createChecks(results: readonly ScenarioResult[]): TargetCheck[] {
  const creates = results.filter((r) => r.scenario === 'creates');
  const single = creates.filter((r) => r.params.mode === 'single');
  const empty = single.find((r) => r.params.tenantSchedules === 0);
  const big = single.find((r) => (r.params.tenantSchedules as number) > 0);
  const batch = creates.find((r) => r.params.mode === 'batch');
  const checks: TargetCheck[] = [];
  const refused = (f: CreateFigures) => (f.failed ? `, ${f.failed} refused` : '');
  for (const r of [empty, big]) {
    if (!r) continue;
    const f = createFigures(r);
    checks.push({
      target: `${r.label}, ${String(r.params.clients)} clients: >= 500 creates/s`,
      pass: f.requestsPerSecond >= 500 && f.failed === 0,
      measured: `${f.requestsPerSecond}/s, p50 ${ms(f.latencyMs?.p50)}, p99 ${ms(f.latencyMs?.p99)}${refused(f)}`,
    });
  }
  if (empty && big) {
    const a = createFigures(empty);
    const b = createFigures(big);
    const size = (big.params.tenantSchedules as number).toLocaleString('en');
    const change = (x: number, y: number) => `${((x / y - 1) * 100).toFixed(0)}%`;
    checks.push({
      target: `${size}-schedule tenant: creates/s within 20% of the empty tenant's`,
      pass: b.requestsPerSecond >= a.requestsPerSecond * 0.8,
      measured: `${b.requestsPerSecond}/s vs ${a.requestsPerSecond}/s (${change(b.requestsPerSecond, a.requestsPerSecond)})`,
    });
    const pa = a.latencyMs?.p99 ?? Infinity;
    const pb = b.latencyMs?.p99 ?? Infinity;
    checks.push({
      target: `${size}-schedule tenant: create p99 within 20% of the empty tenant's`,
      pass: pb <= pa * 1.2,
      measured: `p99 ${ms(pb)} vs ${ms(pa)} (${change(pb, pa)})`,
    });
  }
  if (batch) {
    const f = createFigures(batch);
    checks.push({
      target: `${batch.label}: >= 5,000 schedules/s`,
      pass: f.schedulesPerSecond >= 5000 && f.failed === 0,
      measured: `${f.schedulesPerSecond} schedules/s, batch p50 ${ms(f.latencyMs?.p50)}, p99 ${ms(f.latencyMs?.p99)}${refused(f)}`,
    });
  }
  return checks;
}

/** The results as Markdown tables (printed at the end and written next to the JSON). */
export function renderMarkdown(
  results: readonly ScenarioResult[],
  checks: readonly TargetCheck[],
): string {
  const lines: string[] = [];
  const main = results.filter((r) => r.delivery && r.scenario !== 'peers');
  if (main.length > 0) {
    lines.push(
      '| scenario | expected | delivered | late (pending) | lost | early | dup | lag p50 | p95 | p99 | max | occ/s | service CPU s | service peak RSS MB | Postgres CPU s | Postgres peak PSS MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of main) {
      const d = r.delivery!;
      lines.push(
        `| ${r.label} | ${d.expected} | ${d.delivered} | ${num(d.pending)} | ${d.lost} | ${d.early} | ` +
          `${d.duplicates} | ${ms(d.lagMs?.p50)} | ` +
          `${ms(d.lagMs?.p95)} | ${ms(d.lagMs?.p99)} | ${ms(d.lagMs?.max)} | ${d.achievedPerSecond} | ` +
          `${num(r.resources?.service.cpuSeconds)} | ${num(r.resources?.service.peakRssMb)} | ` +
          `${num(r.resources?.postgres.cpuSeconds)} | ${num(r.resources?.postgres.peakPssMb)} |`,
      );
    }
  }
  const peers = results.filter((r) => r.scenario === 'peers');
  if (peers.length > 0) {
    const ours = peers.find((r) => r.system === 'dueline')?.delivery;
    const ratio = (v: number | undefined, base: number | undefined) =>
      v === undefined || base === undefined || base === 0 ? '-' : `${(v / base).toFixed(1)}×`;
    lines.push(
      '',
      '| peer (same schedules, same Postgres/Redis/sink) | expected | delivered | lost | early | dup | lag p50 | p99 | max | p50 vs ours | p99 vs ours | runner CPU s | runner peak RSS MB |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of peers) {
      const d = r.delivery!;
      lines.push(
        `| ${r.system} | ${d.expected} | ${d.delivered} | ${d.lost} | ${d.early} | ${d.duplicates} | ${ms(d.lagMs?.p50)} | ` +
          `${ms(d.lagMs?.p99)} | ${ms(d.lagMs?.max)} | ${ratio(d.lagMs?.p50, ours?.lagMs?.p50)} | ` +
          `${ratio(d.lagMs?.p99, ours?.lagMs?.p99)} | ${num(r.resources?.service.cpuSeconds)} | ` +
          `${num(r.resources?.service.peakRssMb)} |`,
      );
    }
    for (const r of peers)
      if (r.extra.settings) lines.push('', `${r.system}: ${String(r.extra.settings)}`);
  }
  const creates = results.filter((r) => r.scenario === 'creates');
  if (creates.length > 0) {
    lines.push(
      '',
      '| creates | clients | answered 201 | refused | requests/s | schedules/s | latency p50 | p95 | p99 | max | CPU ms per schedule (service + Postgres) |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const r of creates) {
      const f = createFigures(r);
      lines.push(
        `| ${r.label} | ${String(r.params.clients)} | ${f.ok} | ${f.failed} | ${f.requestsPerSecond} | ` +
          `${f.schedulesPerSecond} | ${ms(f.latencyMs?.p50)} | ${ms(f.latencyMs?.p95)} | ` +
          `${ms(f.latencyMs?.p99)} | ${ms(f.latencyMs?.max)} | ${num(f.cpuMsPerSchedule)} |`,
      );
    }
  }
  const ceiling = results.find((r) => r.scenario === 'ceiling');
  if (ceiling) {
    const best = oursBest(results);
    const top = ceiling.extra.ceilingPerSecond as number;
    const levels = ceiling.extra.levels as Array<{ concurrency: number; perSecond: number }>;
    lines.push(
      '',
      `SQL ceiling: ${top} occurrences/s (${levels.map((l) => `${l.concurrency} loops: ${l.perSecond}/s`).join(', ')})` +
        (best
          ? `; dueline ${best.perSecond}/s (${best.from}) = ${((best.perSecond / top) * 100).toFixed(1)}%`
          : ''),
    );
  }
  lines.push(...renderSoak(results));
  lines.push(...renderCost(results));
  if (checks.length > 0) {
    lines.push('', '| target | result | measured |', '|---|---|---|');
    for (const c of checks)
      lines.push(`| ${c.target} | ${c.pass ? 'PASS' : 'FAIL'} | ${c.measured} |`);
  }
  const contended = results.filter(
    (r) => r.resources && r.resources.otherCpuSeconds > 0.1 * r.resources.seconds,
  );
  const notes = results.flatMap((r) => r.notes.map((n) => `- ${r.label}: ${n}`));
  for (const r of contended) {
    notes.push(
      `- ${r.label}: other processes used ${r.resources!.otherCpuSeconds} CPU s of the ` +
        `${r.resources!.seconds} s window: the machine was shared, figures are pessimistic`,
    );
  }
  if (notes.length > 0) lines.push('', 'Notes:', ...notes);
  return lines.join('\n');
}

export function writeResults(
  dir: string,
  document: Record<string, unknown>,
  markdown: string,
): { json: string; md: string } {
  mkdirSync(dir, { recursive: true });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const json = join(dir, `${stamp}.json`);
  const md = join(dir, `${stamp}.md`);
  writeFileSync(json, JSON.stringify(document, null, 2) + '\n');
  writeFileSync(md, markdown + '\n');
  return { json, md };
}
