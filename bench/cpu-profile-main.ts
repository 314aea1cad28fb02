import { readFileSync } from 'node:fs';
import { SOCKET_WRITES, summarizeCpuProfile, type CpuProfile, type TimeShare } from './cpu-profile';

const USAGE = `npm run bench:profile -- <file.cpuprofile>... [--window FROM-TO] [--top N]

Where each service process spent its time: self time by package / module and by function, idle
left out. Profiles come from a bench run with
  BENCH_SERVICE_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" npm run bench -- steady ...
which then prints the judged window as "--window FROM-TO" (microseconds of the monotonic clock)
to cut the profiles to it.`;

function main(argv: readonly string[]): void {
  const files: string[] = [];
  let window: { fromUs: number; toUs: number } | null = null;
  let top = 25;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      return;
    } else if (arg === '--window') {
      const match = /^(\d+)-(\d+)$/.exec(argv[++i] ?? '');
      if (!match) throw new Error('--window takes FROM-TO, two whole numbers of microseconds');
      window = { fromUs: Number(match[1]), toUs: Number(match[2]) };
    } else if (arg === '--top') {
      top = Number(argv[++i]);
      if (!Number.isInteger(top) || top < 1 || top > 500) throw new Error('--top takes 1 to 500');
    } else files.push(arg);
  }
  if (files.length === 0) {
    console.log(USAGE);
    process.exitCode = 2;
    return;
  }
  for (const file of files) {
    const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
    const summary = summarizeCpuProfile(profile, window, top);
    const busy = summary.sampledMs - summary.idleMs;
    console.log(
      `\n${file}: ${(summary.sampledMs / 1000).toFixed(1)} s sampled` +
        (window ? ' in the window' : '') +
        `, ${(busy / 1000).toFixed(1)} s busy`,
    );
    print('by place', summary.byPlace);
    print('by function', summary.byFunction);
  }
  console.log(
    `\n${[...SOCKET_WRITES].join(', ')}: a profile samples wall time, so a process switched ` +
      'away inside a socket write (to the process it woke) is counted there too.',
  );
}

function print(title: string, rows: readonly TimeShare[]): void {
  console.log(`  ${title}:`);
  for (const row of rows) {
    console.log(
      `    ${(row.share * 100).toFixed(1).padStart(5)} %  ${row.ms.toFixed(0).padStart(7)} ms  ${row.name}`,
    );
  }
}

main(process.argv.slice(2));
