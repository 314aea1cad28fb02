import type { Schemas } from '../client';
import { CliError, dataOf } from './cli-error';
import { allowFlags, arg, type CommandContext, flag, intFlag } from './context';
import { type Column, print, record, table } from './output';
import { collect } from './paging';

type Target = Schemas['TargetDto'];
const METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE'];

const COLUMNS: Column<Target>[] = [
  ['ID', (t) => t.id],
  ['NAME', (t) => t.name],
  ['METHOD', (t) => t.method],
  ['URL', (t) => t.url],
  ['DEDUPLICATES', (t) => (t.deduplicates ? 'yes' : 'no')],
  ['SECRET', (t) => (t.hasSigningSecret ? 'set' : 'none')],
];

export async function listTargets(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['limit', 'all']);
  const items = await collect(
    ctx,
    'targets',
    async (cursor, limit) =>
      dataOf(await ctx.client.GET('/targets', { params: { query: { cursor, limit } } })),
    intFlag(ctx, 'limit'),
  );
  print(ctx.io, ctx.format, items, (rows) => table(rows, COLUMNS));
}

/** `targets create <name> <url>`; a signing secret is set in the console or the API, never argv. */
export async function createTarget(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, ['method', 'timeout-ms', 'deduplicates']);
  const method = flag(ctx, 'method')?.toUpperCase();
  if (method !== undefined && !METHODS.includes(method)) {
    throw CliError.usage(`--method must be one of ${METHODS.join(', ')}`);
  }
  const target = dataOf(
    await ctx.client.POST('/targets', {
      body: {
        name: arg(ctx, 0, 'name'),
        url: arg(ctx, 1, 'url'),
        ...(method ? { method: method as Schemas['CreateTargetDto']['method'] } : {}),
        ...(intFlag(ctx, 'timeout-ms') !== undefined
          ? { timeoutMs: intFlag(ctx, 'timeout-ms') }
          : {}),
        ...(ctx.flags.deduplicates ? { deduplicates: true } : {}),
      },
    }),
  );
  print(ctx.io, ctx.format, target, (t) =>
    record([
      ['id', t.id],
      ['name', t.name],
      ['method', t.method],
      ['url', t.url],
      ['timeoutMs', t.timeoutMs],
      ['deduplicates', t.deduplicates],
      ['signingSecret', t.hasSigningSecret ? 'set' : 'none'],
    ]),
  );
}
