import type { BenchContext, ScenarioResult } from '../context';
import type { ReplicaSpec } from '../world';
import { steadyRun } from './steady-run';

/** Split roles over four processes; worker-b is the one that dies. */
const SPLIT: ReplicaSpec[] = [
  { name: 'api', roles: 'api' },
  { name: 'poller', roles: 'poller,relay' },
  { name: 'worker-a', roles: 'worker' },
  { name: 'worker-b', roles: 'worker' },
];

/**
 * replicas: the steady load (first --rate) on split roles; halfway through the window one worker
 * is SIGKILLed. Its claimed runs come back through lease expiry (30 s lease) and the sweeper, so
 * the drain waits up to two minutes for them; nothing may be lost or run twice as a logical run.
 */
export async function runReplicas(ctx: BenchContext): Promise<ScenarioResult[]> {
  const rate = ctx.flags.rates[0];
  let killedAt: number | null = null;
  const result = await steadyRun(ctx, {
    scenario: 'replicas',
    label: `replicas ${rate}/s, SIGKILL worker-b`,
    rate,
    seconds: ctx.flags.seconds,
    replicas: SPLIT,
    drainMs: 120_000,
    onTick: async (world, elapsedMs) => {
      if (killedAt !== null || elapsedMs < (ctx.flags.seconds * 1000) / 2) return;
      const victim = world.services.find((s) => s.name === 'worker-b')!;
      world.meter.retire(victim.pid);
      await victim.kill();
      killedAt = Date.now();
      console.log(`  [replicas] SIGKILL sent to worker-b (pid ${victim.pid})`);
    },
  });
  result.extra.killedAt = killedAt ? new Date(killedAt).toISOString() : null;
  if (killedAt === null) result.notes.push('the kill did not happen (window too short?)');
  return [result];
}
