import { parseArgs } from 'node:util';
import { createDuelineClient } from '../client';
import { CliError } from './cli-error';
import type { CommandContext, Flags } from './context';
import { EXIT, EXIT_CODES_HELP, type ExitCode } from './exit-codes';
import type { Io, OutputFormat } from './output';
import { cancelRun, getRun, listRuns } from './runs.commands';
import {
  cancelSchedule,
  createSchedule,
  getSchedule,
  listSchedules,
  pauseSchedule,
  previewSchedule,
  resumeSchedule,
  triggerSchedule,
} from './schedules.commands';
import { createTarget, listTargets } from './targets.commands';
import { showUsage } from './usage.command';

type Command = (ctx: CommandContext) => Promise<void>;

const COMMANDS: Record<string, Record<string, Command>> = {
  schedules: {
    list: listSchedules,
    get: getSchedule,
    create: createSchedule,
    preview: previewSchedule,
    pause: pauseSchedule,
    resume: resumeSchedule,
    trigger: triggerSchedule,
    cancel: cancelSchedule,
  },
  runs: { list: listRuns, get: getRun, cancel: cancelRun },
  targets: { list: listTargets, create: createTarget },
};

export const HELP = `dueline: the scheduler's command line (talks to its public API)

Usage: dueline <command> [arguments] [--output table|json]

  schedules list [--status S] [--limit N] [--all]
  schedules get <id>
  schedules create --name N --target <targetId> (--cron C --timezone TZ | --run-at ISO)
                   [--payload JSON] [--idempotency-key K]
  schedules preview <id> [--count N]
  schedules preview --cron C --timezone TZ [--count N] [--from ISO]
  schedules pause|resume|cancel <id>
  schedules trigger <id> [--wait [--timeout SECONDS]]
  runs list <scheduleId> [--state S] [--limit N] [--all]
  runs get|cancel <runId>
  targets list [--limit N] [--all]
  targets create <name> <url> [--method M] [--timeout-ms N] [--deduplicates]
  usage

Environment:
  DUELINE_URL      the server (default http://localhost:3000)
  DUELINE_API_KEY  the tenant's API key (required)

Tables go to stdout; progress and errors to stderr.

${EXIT_CODES_HELP}`;

const OPTIONS = {
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  all: { type: 'boolean' },
  wait: { type: 'boolean' },
  deduplicates: { type: 'boolean' },
  ...Object.fromEntries(
    [
      'status',
      'state',
      'limit',
      'name',
      'target',
      'cron',
      'timezone',
      'run-at',
      'payload',
      'idempotency-key',
      'count',
      'from',
      'timeout',
      'method',
      'timeout-ms',
    ].map((name) => [name, { type: 'string' }]),
  ),
} as const;

/** Runs one command line; returns the exit code (never exits the process itself). */
export async function runCli(
  argv: string[],
  env: Record<string, string | undefined>,
  io: Io,
): Promise<ExitCode> {
  try {
    const { values, positionals } = parse(argv);
    const [group, action, ...args] = positionals;
    if (values.help || !group) {
      io.out(HELP);
      return group || values.help ? EXIT.ok : EXIT.usage;
    }
    const command = group === 'usage' && !action ? showUsage : COMMANDS[group]?.[action ?? ''];
    if (!command) throw CliError.usage(`unknown command "${positionals.join(' ')}" (see --help)`);
    const format = outputFormat(values.output);
    const apiKey = env.DUELINE_API_KEY;
    if (!apiKey) throw CliError.usage('set DUELINE_API_KEY to the tenant API key');
    const baseUrl = (env.DUELINE_URL || 'http://localhost:3000').replace(/\/+$/, '');
    const { output: _output, help: _help, ...flags } = values;
    await command({
      client: createDuelineClient({ baseUrl, apiKey }),
      io,
      format,
      args: group === 'usage' ? [] : args,
      flags: flags as Flags,
    });
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CliError) {
      io.err(`dueline: ${error.message}`);
      return error.exitCode;
    }
    io.err(`dueline: ${unreachable(error)}`);
    return EXIT.failure;
  }
}

function parse(argv: string[]): {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
} {
  try {
    return parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw CliError.usage(error instanceof Error ? error.message : String(error));
  }
}

function outputFormat(value: unknown): OutputFormat {
  if (value === undefined || value === 'table') return 'table';
  if (value === 'json') return 'json';
  throw CliError.usage('--output must be table or json');
}

/** fetch's TypeError says "fetch failed"; its cause says why (ECONNREFUSED…). */
function unreachable(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause) return `cannot reach the server (${cause.code ?? cause.message})`;
  return error instanceof Error ? error.message : String(error);
}
