import { setTimeout as sleep } from 'node:timers/promises';
import type { Schemas } from '../client';
import { CliError, dataOf } from './cli-error';
import { allowFlags, arg, type CommandContext, flag, intFlag } from './context';
import { EXIT } from './exit-codes';
import { type Column, print, record, table } from './output';
import { collect } from './paging';

type Run = Schemas['RunDto'];
type RunState = Run['state'];

const STATES: RunState[] = [
  'QUEUED',
  'RUNNING',
  'RETRY_WAIT',
  'SUCCEEDED',
  'FAILED',
  'SKIPPED',
  'CANCELLED',
  'UNKNOWN',
];
const FINAL: RunState[] = ['SUCCEEDED', 'FAILED', 'SKIPPED', 'CANCELLED', 'UNKNOWN'];
const POLL_MS = 500;

const COLUMNS: Column<Run>[] = [
  ['ID', (r) => r.id],
  ['SCHEDULED (UTC)', (r) => r.scheduledAt],
  ['LOCAL', (r) => r.scheduledLocal],
  ['STATE', (r) => r.state],
  ['REASON', (r) => r.reason],
  ['ATTEMPTS', (r) => `${r.attemptCount}/${r.maxAttempts}`],
];

export async function listRuns(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['state', 'limit', 'all']);
  const id = arg(ctx, 0, 'schedule id');
  const state = flag(ctx, 'state');
  if (state !== undefined && !STATES.includes(state as RunState)) {
    throw CliError.usage(`--state must be one of ${STATES.join(', ')}`);
  }
  const items = await collect(
    ctx,
    'runs',
    async (cursor, limit) =>
      dataOf(
        await ctx.client.GET('/schedules/{id}/runs', {
          params: { path: { id }, query: { state: state as RunState | undefined, cursor, limit } },
        }),
      ),
    intFlag(ctx, 'limit'),
  );
  print(ctx.io, ctx.format, items, (rows) => table(rows, COLUMNS));
}

export async function getRun(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  const id = arg(ctx, 0, 'run id');
  const run = dataOf(await ctx.client.GET('/runs/{id}', { params: { path: { id } } }));
  print(ctx.io, ctx.format, run, (r) =>
    [
      describeRun(r),
      '',
      table(r.attempts, [
        ['ATTEMPT', (a) => a.attemptNo],
        ['FENCE', (a) => a.fencingToken],
        ['STARTED', (a) => a.startedAt],
        ['MS', (a) => a.durationMs],
        ['OUTCOME', (a) => a.outcome],
        ['HTTP', (a) => a.httpStatus],
        ['ERROR', (a) => a.error],
      ]),
    ].join('\n'),
  );
}

export async function cancelRun(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  const id = arg(ctx, 0, 'run id');
  const run = dataOf(await ctx.client.POST('/runs/{id}/cancel', { params: { path: { id } } }));
  print(ctx.io, ctx.format, run, (r) =>
    [describeRun(r), `inFlight     ${r.inFlight ? 'yes: an attempt may still act' : 'no'}`].join(
      '\n',
    ),
  );
}

export function printRun(ctx: CommandContext, run: Run): void {
  print(ctx.io, ctx.format, run, describeRun);
}

/** Polls the run until it ends, saying each state it passes through on stderr. */
export async function waitForRun(ctx: CommandContext, from: Run, timeoutMs: number): Promise<Run> {
  const { id } = from;
  const deadline = Date.now() + timeoutMs;
  // The state the caller already reported: every change after it is said, the last one too.
  let last: RunState = from.state;
  for (;;) {
    const run = dataOf(await ctx.client.GET('/runs/{id}', { params: { path: { id } } }));
    if (run.state !== last) {
      ctx.io.err(`run ${id}: ${run.state}${run.reason ? ` (${run.reason})` : ''}`);
      last = run.state;
    }
    if (FINAL.includes(run.state)) return run;
    if (Date.now() > deadline) {
      throw new CliError(`run ${id} still ${run.state} after ${timeoutMs / 1000} s`, EXIT.failure);
    }
    await sleep(POLL_MS);
  }
}

function describeRun(r: Run): string {
  return record([
    ['id', r.id],
    ['schedule', r.scheduleId],
    ['scheduledAt', r.scheduledAt],
    ['local', r.scheduledLocal],
    ['state', r.state],
    ['reason', r.reason],
    ['detail', r.reasonDetail],
    ['attempts', `${r.attemptCount}/${r.maxAttempts}`],
    ['fencingToken', r.fencingToken],
    ['finishedAt', r.finishedAt],
  ]);
}
