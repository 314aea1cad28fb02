import { randomUUID } from 'node:crypto';
import type { Schemas } from '../client';
import { CliError, dataOf } from './cli-error';
import {
  allowFlags,
  arg,
  type CommandContext,
  flag,
  intFlag,
  jsonFlag,
  requiredFlag,
} from './context';
import { EXIT } from './exit-codes';
import { type Column, print, record, table } from './output';
import { collect } from './paging';
import { printRun, waitForRun } from './runs.commands';

type Schedule = Schemas['ScheduleDto'];
type Status = NonNullable<Schemas['UpdateScheduleDto']['status']>;

const COLUMNS: Column<Schedule>[] = [
  ['ID', (s) => s.id],
  ['NAME', (s) => s.name],
  ['STATUS', (s) => s.status],
  ['WHEN', (s) => (s.cron ? `${s.cron} ${s.timezone}` : s.runAt)],
  ['NEXT DUE (UTC)', (s) => s.nextDueAt],
  ['REV', (s) => s.revision],
];

const STATUSES = ['active', 'paused', 'cancelled', 'completed'] as const;

export async function listSchedules(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['status', 'limit', 'all']);
  const status = flag(ctx, 'status');
  if (status !== undefined && !STATUSES.includes(status as (typeof STATUSES)[number])) {
    throw CliError.usage(`--status must be one of ${STATUSES.join(', ')}`);
  }
  const items = await collect(
    ctx,
    'schedules',
    async (cursor, limit) =>
      dataOf(
        await ctx.client.GET('/schedules', {
          params: { query: { status: status as Schedule['status'], cursor, limit } },
        }),
      ),
    intFlag(ctx, 'limit'),
  );
  print(ctx.io, ctx.format, items, (rows) => table(rows, COLUMNS));
}

export async function getSchedule(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  print(ctx.io, ctx.format, await readSchedule(ctx, arg(ctx, 0, 'schedule id')), describe);
}

export async function createSchedule(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['name', 'target', 'cron', 'timezone', 'run-at', 'payload', 'idempotency-key']);
  const cron = flag(ctx, 'cron');
  const runAt = flag(ctx, 'run-at');
  if ((cron === undefined) === (runAt === undefined)) {
    throw CliError.usage('give either --cron (with --timezone) or --run-at');
  }
  const body: Schemas['CreateScheduleDto'] = {
    name: requiredFlag(ctx, 'name'),
    targetId: requiredFlag(ctx, 'target'),
    ...(cron !== undefined ? { cron, timezone: requiredFlag(ctx, 'timezone') } : { runAt }),
    ...(flag(ctx, 'payload') !== undefined ? { payload: jsonFlag(ctx, 'payload') } : {}),
  };
  // A retried create with the same key replays the first answer instead of creating twice.
  const key = flag(ctx, 'idempotency-key') ?? randomUUID();
  const schedule = dataOf(
    await ctx.client.POST('/schedules', {
      body,
      params: { header: { 'Idempotency-Key': key } },
    }),
  );
  print(ctx.io, ctx.format, schedule, describe);
}

export async function previewSchedule(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['cron', 'timezone', 'count', 'from']);
  const count = intFlag(ctx, 'count');
  const id = ctx.args[0];
  const preview = id
    ? dataOf(
        await ctx.client.GET('/schedules/{id}/preview', {
          params: { path: { id }, query: { count } },
        }),
      )
    : dataOf(
        await ctx.client.POST('/schedules/preview', {
          body: {
            cron: requiredFlag(ctx, 'cron'),
            timezone: requiredFlag(ctx, 'timezone'),
            count,
            from: flag(ctx, 'from'),
          },
        }),
      );
  print(ctx.io, ctx.format, preview, ({ items }) =>
    table(items, [
      ['UTC', (i) => i.at],
      ['LOCAL', (i) => i.local],
    ]),
  );
}

export const pauseSchedule = (ctx: CommandContext) => setStatus(ctx, 'paused');
export const resumeSchedule = (ctx: CommandContext) => setStatus(ctx, 'active');

/** Reads the revision, then writes over exactly it (If-Match): never over someone's edit. */
async function setStatus(ctx: CommandContext, status: Status): Promise<void> {
  allowFlags(ctx, []);
  const current = await readSchedule(ctx, arg(ctx, 0, 'schedule id'));
  const schedule = dataOf(
    await ctx.client.PATCH('/schedules/{id}', {
      params: { path: { id: current.id }, header: { 'If-Match': `"${current.revision}"` } },
      body: { status },
    }),
  );
  print(ctx.io, ctx.format, schedule, describe);
}

export async function cancelSchedule(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  const id = arg(ctx, 0, 'schedule id');
  const schedule = dataOf(
    await ctx.client.DELETE('/schedules/{id}', { params: { path: { id }, header: {} } }),
  );
  print(ctx.io, ctx.format, schedule, describe);
}

export async function triggerSchedule(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['wait', 'timeout']);
  const id = arg(ctx, 0, 'schedule id');
  const run = dataOf(
    await ctx.client.POST('/schedules/{id}/trigger', { params: { path: { id } } }),
  );
  if (!ctx.flags.wait) {
    printRun(ctx, run);
    return;
  }
  ctx.io.err(`run ${run.id}: ${run.state}`);
  const finished = await waitForRun(ctx, run, (intFlag(ctx, 'timeout') ?? 120) * 1000);
  printRun(ctx, finished);
  if (finished.state !== 'SUCCEEDED') {
    throw new CliError(`run ${finished.id} ended ${finished.state}`, EXIT.runNotSucceeded);
  }
}

async function readSchedule(ctx: CommandContext, id: string): Promise<Schedule> {
  return dataOf(await ctx.client.GET('/schedules/{id}', { params: { path: { id } } }));
}

function describe(s: Schedule): string {
  return record([
    ['id', s.id],
    ['name', s.name],
    ['status', s.status],
    ['revision', s.revision],
    ['target', s.targetId],
    ['cron', s.cron ? `${s.cron} (${s.timezone})` : null],
    ['runAt', s.runAt],
    ['nextDueAt', s.nextDueAt],
    ['overlap', s.overlapPolicy],
    ['missedRuns', s.missedRunPolicy],
    ['priority', s.priority],
  ]);
}
