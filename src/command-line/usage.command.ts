import { dataOf } from './cli-error';
import { allowFlags, type CommandContext } from './context';
import { print, record, table } from './output';

/**
 * `usage`: the tenant's quotas against what it uses (`GET /usage`): active schedules, permits
 * held, runs waiting by reason, the oldest waiting age, and the busiest projected minutes.
 */
export async function showUsage(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  const usage = dataOf(await ctx.client.GET('/usage'));
  print(ctx.io, ctx.format, usage, (u) =>
    [
      record([
        ['activeSchedules', `${u.activeSchedules} of ${u.quotas.maxActiveSchedules}`],
        ['runsHoldingPermits', `${u.runsHoldingPermits} of ${u.quotas.maxConcurrentRuns}`],
        ['dispatchRate', `${u.quotas.dispatchRatePerSecond}/s (${u.allowedRunsPerMinute}/min)`],
        ['weight', u.quotas.weight],
        ['waiting.concurrency', u.waitingRuns.throttled_concurrency],
        ['waiting.rate', u.waitingRuns.throttled_rate],
        ['waiting.fleet', u.waitingRuns.throttled_fleet],
        ['oldestWaitingSeconds', u.oldestWaitingSeconds],
      ]),
      '',
      u.busiestMinutes.length
        ? table(u.busiestMinutes, [
            ['BUSIEST MINUTE (UTC)', (m) => m.minute],
            ['RUNS', (m) => m.runs],
          ])
        : 'no runs projected in the next 24 hours',
    ].join('\n'),
  );
}
