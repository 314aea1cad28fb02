import type { ScenarioResult, TargetCheck } from './context';
import type { Growth, Plateau, Recovery } from './soak-analysis';

const ms = (v: number) => (Number.isFinite(v) ? `${v.toFixed(1)} ms` : '-');
const pct = (v: number) => (Number.isFinite(v) ? `${(v * 100).toFixed(0)}%` : '∞');
const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;

/**
 * The soak's targets (issue 14, point 4): sizes plateau over the steady phase, the p99 of its
 * last third within 20 % of its first, and recovery after the held REPEATABLE READ transaction;
 * each p99 pooled over a span of intervals (see spanLag).
 */
export function soakChecks(results: readonly ScenarioResult[]): TargetCheck[] {
  const checks: TargetCheck[] = [];
  for (const r of results.filter((x) => x.scenario === 'soak')) {
    const size = r.extra.plateau as Plateau | null;
    const lag = r.extra.lagGrowth as Growth;
    const back = r.extra.recovery as Recovery | null;
    checks.push({
      target: `${r.label}: table+index sizes plateau (last third's max ≤ 1.1 × middle third's)`,
      pass: size?.pass === true,
      measured: size
        ? `${mb(size.lastMax)} vs ${mb(size.middleMax)} (× ${size.ratio})`
        : 'too few samples',
    });
    checks.push({
      target: `${r.label}: p99 lag of the steady phase's last third ≤ 1.2 × its first (after warm-up)`,
      pass: lag.pass,
      measured: `${ms(lag.last)} vs ${ms(lag.first)} (${pct(lag.change)})`,
    });
    if (back) {
      checks.push({
        target: `${r.label}: after the REPEATABLE READ transaction, dead tuples recover and the recovery's second half has p99 ≤ 1.2 × the steady last third's`,
        pass: back.pass,
        measured:
          `dead tuples ${back.deadAtEnd} at the end (peak ${back.deadPeakHeld} while held, ` +
          `steady ${back.deadBaseline}); p99 ${ms(back.lag.last)} vs ${ms(back.lag.first)} before (${pct(back.lag.change)})`,
      });
    }
  }
  return checks;
}

/** Sizes, dead tuples, autovacuum and lag per interval, one table per soak run. */
export function renderSoak(results: readonly ScenarioResult[]): string[] {
  const lines: string[] = [];
  for (const r of results.filter((x) => x.scenario === 'soak')) {
    const samples = r.extra.samples as Array<{
      t: number;
      phase: string;
      received: number;
      lagP99Ms: number | null;
      tableBytes: number;
      indexBytes: number;
      deadTuples: number;
      autovacuums: number;
      partitionsDropped: number;
    }>;
    lines.push(
      '',
      `| ${r.label}: t (s) | phase | received | p99 (received in interval) | tables | indexes | dead tuples | autovacuums | partitions dropped |`,
      '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const s of samples) {
      lines.push(
        `| ${s.t} | ${s.phase} | ${s.received} | ${s.lagP99Ms === null ? '-' : ms(s.lagP99Ms)} | ` +
          `${mb(s.tableBytes)} | ${mb(s.indexBytes)} | ${s.deadTuples} | ${s.autovacuums} | ${s.partitionsDropped} |`,
      );
    }
  }
  return lines;
}
