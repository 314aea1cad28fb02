import type { ScenarioResult } from './context';
import {
  describeExtrapolation,
  extrapolate,
  REFERENCE,
  type OccurrenceCost,
} from './cost-arithmetic';

const costOf = (r: ScenarioResult) => (r.extra.cost as OccurrenceCost | undefined) ?? null;

/**
 * The row whose per-run cost the extrapolation uses: dueline's steady-type row that delivered the
 * most runs per second (per-run costs fall as batches fill), the soak's only if nothing else ran.
 * The noisy phases' costs are a flood's (each run written waiting, then admitted), not a steady
 * workload's: never the source.
 */
export function extrapolationSource(results: readonly ScenarioResult[]): ScenarioResult | null {
  const ours = results.filter(
    (r) => r.system === 'dueline' && r.scenario !== 'noisy' && costOf(r) && costOf(r)!.runs > 0,
  );
  const pool = ours.filter((r) => r.scenario !== 'soak');
  const candidates = pool.length > 0 ? pool : ours;
  let best: ScenarioResult | null = null;
  for (const r of candidates) {
    const rate = costOf(r)!.runs / Math.max(1, costOf(r)!.seconds);
    if (!best || rate > costOf(best)!.runs / Math.max(1, costOf(best)!.seconds)) best = r;
  }
  return best;
}

/** The cost-of-one-occurrence table and the reference workload extrapolated from it. */
export function renderCost(results: readonly ScenarioResult[]): string[] {
  const rows = results.filter((r) => costOf(r));
  if (rows.length === 0) return [];
  const v = (x: number | null) => (x === null ? '-' : String(x));
  const lines = [
    '',
    '| cost per delivered run | runs | Postgres CPU ms | WAL bytes | WAL records | statements (+ FK checks) | transactions | round trips (waits) | relation growth B (history / queue / other) | service CPU ms |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    const c = costOf(r)!;
    const p = c.perRun;
    lines.push(
      `| ${r.label} | ${c.runs} | ${v(p.postgresCpuMs)} | ${v(p.walBytes)} | ${v(p.walRecords)} | ` +
        `${v(p.statements)} (+${v(p.foreignKeyChecks)}) | ${v(p.transactions)} | ${v(p.roundTrips)} (${v(p.waits)}) | ` +
        `${v(p.relationBytes)} (${v(p.historyBytes)} / ${v(p.queueBytes)} / ${v(p.otherBytes)}) | ` +
        `${v(p.serviceCpuMs)} |`,
    );
  }
  const source = extrapolationSource(results);
  const ceiling = rows.find((r) => r.scenario === 'ceiling');
  const printed: string[] = [];
  if (source)
    printed.push(...describeExtrapolation(source.label, extrapolate(costOf(source)!.perRun)));
  if (ceiling) {
    const e = extrapolate(costOf(ceiling)!.perRun);
    const [head, cpu, wal] = describeExtrapolation(ceiling.label, e);
    printed.push(head, cpu, wal);
  }
  if (printed.length > 0) {
    lines.push(
      '',
      'Reference workload (linear in the per-run figures above; assumptions: ' +
        `${REFERENCE.schedules.toLocaleString('en')} schedules, summary rows ~${REFERENCE.summaryRowBytes} B, ` +
        `${REFERENCE.queueRetentionHours} h of finished queue jobs kept, ${REFERENCE.replicaCoreBudget} core per replica):`,
      '',
      '```',
      ...printed,
      '```',
    );
  }
  return lines;
}
