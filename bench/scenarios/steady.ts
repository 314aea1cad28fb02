import type { BenchContext, ScenarioResult } from '../context';
import { SINGLE } from '../world';
import { steadyRun } from './steady-run';

/** steady: cron schedules plus one-time jobs at a fixed rate, on one all-roles replica. */
export async function runSteady(ctx: BenchContext): Promise<ScenarioResult[]> {
  const results: ScenarioResult[] = [];
  for (const rate of ctx.flags.rates) {
    results.push(
      await steadyRun(ctx, {
        scenario: 'steady',
        label: `steady ${rate}/s`,
        rate,
        seconds: ctx.flags.seconds,
        warmupSeconds: ctx.flags.warmupSeconds,
        replicas: SINGLE,
      }),
    );
  }
  return results;
}
