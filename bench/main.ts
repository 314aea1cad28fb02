import { resolve } from 'node:path';
import { parseArgs, ScenarioName, SCENARIOS, USAGE } from './cli';
import { PhasesFailed, type BenchContext, type ScenarioResult } from './context';
import { PgServer } from './postgres';
import { checkTargets, describeMachine, renderMarkdown, writeResults } from './report';
import { runBurst } from './scenarios/burst';
import { runCeiling } from './scenarios/ceiling';
import { runCreates } from './scenarios/creates';
import { runPeers } from './scenarios/peers';
import { runNoisy } from './scenarios/noisy';
import { runReplicas } from './scenarios/replicas';
import { runScale } from './scenarios/scale';
import { runSoak } from './scenarios/soak';
import { runSteady } from './scenarios/steady';
import { SERVICE_MAIN } from './service';
import { Sink } from './sink';

const RUNNERS: Record<ScenarioName, (ctx: BenchContext) => Promise<ScenarioResult[]>> = {
  steady: runSteady,
  burst: runBurst,
  scale: runScale,
  replicas: runReplicas,
  noisy: runNoisy,
  peers: runPeers,
  ceiling: runCeiling,
  creates: runCreates,
  soak: runSoak,
};

/**
 * `npm run bench -- [scenario ...] [flags]`: runs the scenarios one after another on one Postgres
 * and one sink, prints progress and a table, checks the issue's targets and writes the results.
 * A scenario that fails is reported and the others still run.
 */
async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const startedAt = new Date();
  console.log(`dueline bench: ${args.scenarios.join(', ')}  flags ${JSON.stringify(args.flags)}`);
  const pg = await PgServer.start((line) => console.log(line));
  const sink = await Sink.start();
  const machine = describeMachine(pg.version);
  console.log(
    `machine: ${machine.nproc} × ${machine.cpuModel}, ${machine.memoryGiB} GiB, Node ${machine.node}, ` +
      `${machine.postgres}`,
  );
  console.log(`service: node ${SERVICE_MAIN}`);
  const ctx: BenchContext = { pg, sink, flags: args.flags };
  const results: ScenarioResult[] = [];
  const failures: Array<{ scenario: string; error: string }> = [];
  try {
    for (const scenario of args.scenarios) {
      try {
        results.push(...(await RUNNERS[scenario](ctx)));
      } catch (error) {
        if (error instanceof PhasesFailed) results.push(...error.results);
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        console.error(`\n!! scenario ${scenario} failed: ${message}`);
        failures.push({ scenario, error: message });
      }
    }
  } finally {
    await sink.close();
    await pg.stop();
  }

  const checks = checkTargets(results);
  const markdown = renderMarkdown(results, checks);
  const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(' ')}` : ''}`;
  console.log(`\n${markdown}\n`);
  for (const c of checks) console.log(`${c.pass ? 'PASS' : 'FAIL'}  ${c.target}: ${c.measured}`);
  for (const f of failures) console.log(`ERROR ${f.scenario}: ${f.error.split('\n')[0]}`);
  const files = writeResults(
    resolve(process.cwd(), 'bench', 'results'),
    {
      command,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine,
      postgres: { kind: pg.kind, version: pg.version },
      service: SERVICE_MAIN,
      flags: args.flags,
      scenarios: args.scenarios,
      results,
      targets: checks,
      failures,
    },
    [
      `Command: \`${command}\``,
      `Machine: ${machine.nproc} × ${machine.cpuModel}, ${machine.memoryGiB} GiB RAM, Node ${machine.node}, ` +
        `${machine.postgres} (${pg.kind}), ${machine.redis ?? 'Redis n/a'}`,
      '',
      markdown,
    ].join('\n'),
  );
  console.log(`\nresults: ${files.json}\n         ${files.md}`);
  if (args.scenarios.length < SCENARIOS.length) {
    console.log(
      'full set: npm run bench -- all   (or: steady --seconds 60, burst --big, scale, replicas, peers, ceiling, creates, soak)',
    );
  }
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.stack : error);
    process.exit(1);
  },
);
