import { SCHEDULE_LIMITS } from '../src/schedules/schedule-limits';
import { NOISY_PHASES, type BenchFlags, type NoisyPhase, type SoakFlags } from './context';

export const SCENARIOS = [
  'steady',
  'burst',
  'scale',
  'replicas',
  'noisy',
  'peers',
  'ceiling',
  'creates',
  'soak',
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** With no scenario named: what finishes in under ~10 minutes on 2 cores. */
export const DEFAULT_SET: ScenarioName[] = ['steady', 'burst', 'peers', 'ceiling'];
export const DEFAULT_SET_SECONDS = 20;

export const USAGE = `Usage: npm run bench -- [scenario ...] [flags]

Scenarios (default: ${DEFAULT_SET.join(' ')}, steady shortened to ${DEFAULT_SET_SECONDS} s per rate):
  steady     6-field cron schedules + one-time jobs at --rate occurrences/s for --seconds
  burst      --burst N one-time jobs due at the same instant (10,000; --big adds 100,000)
  scale      the --scale-rate load with 10,000 and then --schedules (1,000,000) other schedules
  replicas   the first --rate on api | poller,relay | worker | worker; one worker SIGKILLed
  noisy      tenant isolation, in phases (--noisy-phases, default all), each on a fresh database:
             flood     one tenant's --flood (200/s, 50 concurrent) beside --quiet-tenants quiet
                       ones (one run every 20 ms while the flood drains: 50 s, 2,500 runs), against
                       the quiet load alone
             many      --many-tenants small tenants (SQL-seeded, --many-runs quiet runs each over
                       the same 50 s) beside two --flood floods, against the same quiet load alone
             fair      three tenants of weight 1, 1, 2 flooding --fair-runs runs each into a small
                       fleet (20 slots, 20 admitted waiting, a --fair-target-ms target): their
                       shares of the deliveries while all three are backlogged
             reserved  a --reserved-flood flood saturating 40 of 50 slots (a 200 ms target)
                       beside a tenant's priority-high runs, one every 50 ms for 30 s
  peers      pg-boss schedule() and BullMQ job schedulers firing the same once-a-minute schedules
  ceiling    the same per-occurrence database work as bare batched SQL
  creates    POST /schedules from --create-clients for an empty tenant and one with --schedules,
             then POST /schedules/batch of 1,000 items
  soak       --soak-rate cron runs/s with history partitions of --partition-minutes kept
             --retention-minutes: a steady phase (--soak-seconds), then a REPEATABLE READ
             transaction held open on another connection (--hold-seconds), then --recovery-seconds;
             a line per --soak-interval with sizes, dead tuples, autovacuum, lag (about 14 min;
             in \`all\` a short form of about 5 min: 210 + 30 + 60 s, 1-minute retention)
  all        every scenario above with its full defaults, steady also at 2000/s, the burst also
             at 100,000, soak shortened (about 30 minutes)

Flags:
  --rate 200,1000         steady rates (occurrences/s; all: 200,1000,2000)  --seconds 60 window
  --warmup-seconds 0      steady: the same load for that long before the judged window (the
                          first seconds after the service starts are slower: see RESULTS.md)
  --tenants 4             tenants the load is spread over
  --via-api               steady/scale/replicas: create the load through the API (cron
                          schedules up front, one-time jobs 5 s ahead while the window runs)
                          instead of seeding it with SQL before the window
  --burst 10000 / --big   burst size(s); --big (and all) adds 100,000
  --burst-repeat 1        burst: instants of that size, --burst-gap-seconds 20 apart (idle between)
  --payload-bytes 0       burst: each job's payload, that many bytes of incompressible JSON
                          (at most ${SCHEDULE_LIMITS.maxPayloadBytes}, the API's limit; 0: {})
  --schedules 1000000     scale: background schedules; creates: the big tenant's
  --scale-rate 50         scale: due load
  --create-seconds 15     creates: judged seconds per tenant and of batches
  --create-clients 16     creates: concurrent single-create clients
  --peer-schedules 100    peers: schedules per system           --peer-minutes 2
  --ceiling-seconds 10    ceiling: seconds per concurrency level
  --flood 10000           noisy: the flooding tenant's runs     --quiet-tenants 20
  --noisy-phases flood,many,fair,reserved   noisy: the phases to run
  --many-tenants 1000     noisy many: small tenants             --many-runs 10 (quiet runs each)
  --fair-runs 3000        noisy fair: runs per flooding tenant   --fair-target-ms 20 (per call)
  --reserved-flood 7000   noisy reserved: the saturating flood's runs
  --soak-rate 150         soak: occurrences/s                   --soak-interval 30 (s)
  --soak-seconds 540      soak: steady phase   --hold-seconds 120   --recovery-seconds 120
  --partition-minutes 1   --retention-minutes 3   --maintenance-ms 5000   (soak's history knobs)

Runs against DATABASE_URL when set, else an embedded PostgreSQL in a temp directory; every
scenario gets a fresh database. Results: bench/results/<timestamp>.json and .md.`;

export interface ParsedArgs {
  scenarios: ScenarioName[];
  flags: BenchFlags;
  help: boolean;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const named: string[] = [];
  const values = new Map<string, string>();
  const switches = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('--')) {
      named.push(arg);
      continue;
    }
    const [name, inline] = arg.slice(2).split('=', 2);
    if (name === 'big' || name === 'help' || name === 'via-api') switches.add(name);
    else if (inline !== undefined) values.set(name, inline);
    else if (i + 1 < argv.length) values.set(name, argv[++i]);
    else throw new Error(`--${name} needs a value`);
  }
  const known = new Set([
    'rate',
    'seconds',
    'warmup-seconds',
    'tenants',
    'burst',
    'burst-repeat',
    'burst-gap-seconds',
    'payload-bytes',
    'schedules',
    'scale-rate',
    'peer-schedules',
    'peer-minutes',
    'ceiling-seconds',
    'flood',
    'quiet-tenants',
    'create-seconds',
    'create-clients',
    'noisy-phases',
    'many-tenants',
    'many-runs',
    'fair-runs',
    'fair-target-ms',
    'reserved-flood',
    'soak-rate',
    'soak-seconds',
    'hold-seconds',
    'recovery-seconds',
    'soak-interval',
    'partition-minutes',
    'retention-minutes',
    'maintenance-ms',
  ]);
  for (const name of values.keys()) if (!known.has(name)) throw new Error(`unknown flag --${name}`);

  let scenarios: ScenarioName[];
  const isDefault = named.length === 0;
  if (isDefault) scenarios = [...DEFAULT_SET];
  else if (named.includes('all')) scenarios = [...SCENARIOS];
  else {
    for (const n of named) {
      if (!(SCENARIOS as readonly string[]).includes(n)) throw new Error(`unknown scenario "${n}"`);
    }
    scenarios = named as ScenarioName[];
  }
  const list = (name: string, fallback: number[]) =>
    values.has(name)
      ? values
          .get(name)!
          .split(',')
          .map((v) => wholeNumber(name, v))
      : fallback;
  /** A whole number of at least `least` (1 unless a flag's 0 means "none"). */
  const one = (name: string, fallback: number, least = 1) =>
    values.has(name) ? wholeNumber(name, values.get(name)!, least) : fallback;

  const all = named.includes('all');
  const payloadBytes = one('payload-bytes', 0, 0);
  if (payloadBytes > SCHEDULE_LIMITS.maxPayloadBytes)
    throw new Error(
      `--payload-bytes: at most ${SCHEDULE_LIMITS.maxPayloadBytes} (the API's limit)`,
    );
  const burst = list('burst', [10_000]);
  // `all` judges every throughput target, the 100,000-run instant among them.
  if ((switches.has('big') || all) && !burst.includes(100_000)) burst.push(100_000);
  return {
    scenarios,
    help: switches.has('help'),
    flags: {
      rates: list('rate', all ? [200, 1000, 2000] : [200, 1000]),
      seconds: one('seconds', isDefault ? DEFAULT_SET_SECONDS : 60),
      warmupSeconds: one('warmup-seconds', 0, 0),
      viaApi: switches.has('via-api'),
      tenants: one('tenants', 4),
      burst,
      burstRepeat: one('burst-repeat', 1),
      burstGapSeconds: one('burst-gap-seconds', 20),
      burstPayloadBytes: payloadBytes,
      scaleSchedules: one('schedules', 1_000_000),
      scaleRate: one('scale-rate', 50),
      peerSchedules: one('peer-schedules', 100),
      peerMinutes: one('peer-minutes', 2),
      ceilingSeconds: one('ceiling-seconds', 10),
      flood: one('flood', 10_000),
      quietTenants: one('quiet-tenants', 20),
      createSeconds: one('create-seconds', 15),
      createClients: one('create-clients', 16),
      noisyPhases: noisyPhases(values.get('noisy-phases')),
      manyTenants: one('many-tenants', 1000),
      manyRuns: one('many-runs', 10),
      fairRuns: one('fair-runs', 3000),
      fairTargetMs: one('fair-target-ms', 20),
      reservedFlood: one('reserved-flood', 7000),
      soak: soakFlags(one, all),
    },
  };
}

/**
 * Soak defaults: about 14 minutes alone (9 min steady with 3-minute retention, so several
 * partitions are dropped and the middle third already holds a full retention period); in \`all\`
 * 3.5 min steady with 1-minute retention, 30 s held and the 60 s autovacuum needs to come back.
 */
function soakFlags(one: (name: string, fallback: number) => number, short: boolean): SoakFlags {
  return {
    rate: one('soak-rate', 150),
    steadySeconds: one('soak-seconds', short ? 210 : 540),
    holdSeconds: one('hold-seconds', short ? 30 : 120),
    recoverySeconds: one('recovery-seconds', short ? 60 : 120),
    intervalSeconds: one('soak-interval', short ? 15 : 30),
    partitionMinutes: one('partition-minutes', 1),
    retentionMinutes: one('retention-minutes', short ? 1 : 3),
    maintenanceMs: one('maintenance-ms', short ? 2000 : 5000),
  };
}

/** `--noisy-phases a,b`: known phase names, run in the scenario's own order. */
function noisyPhases(raw: string | undefined): NoisyPhase[] {
  if (raw === undefined) return [...NOISY_PHASES];
  const named = raw.split(',').map((v) => v.trim());
  for (const n of named) {
    if (!(NOISY_PHASES as readonly string[]).includes(n)) {
      throw new Error(`--noisy-phases: unknown phase "${n}" (known: ${NOISY_PHASES.join(', ')})`);
    }
  }
  return NOISY_PHASES.filter((p) => named.includes(p));
}

function wholeNumber(name: string, raw: string, least = 1): number {
  const value = Number(raw.replace(/_/g, ''));
  if (raw.trim() === '' || !Number.isInteger(value) || value < least)
    throw new Error(
      `--${name}: "${raw}" is not ${least === 1 ? 'a positive integer' : `an integer ≥ ${least}`}`,
    );
  return value;
}
