import { CliError } from './cli-error';
import { allowFlags, type CommandContext } from './context';
import { EXIT } from './exit-codes';
import { print, record } from './output';

/**
 * `usage`: the tenant's quotas against what it uses, from `GET /usage`. That route comes with
 * the tenant-usage work and is not in the generated contract yet, so this one call is made by
 * hand; once the contract has it, it becomes `client.GET('/usage')`. The answer is shown as it
 * comes, field by field: nothing is computed or assumed here.
 */
export async function showUsage(ctx: CommandContext): Promise<void> {
  allowFlags(ctx, []);
  const response = await fetch(`${ctx.baseUrl}/usage`, {
    headers: { Authorization: `Bearer ${ctx.apiKey}`, Accept: 'application/json' },
  });
  const body: unknown = await response.json().catch(() => undefined);
  // /usage names no resource: a 404 can only mean the route itself is missing.
  if (response.status === 404) {
    throw new CliError(
      'this server does not report usage yet (it has no GET /usage)',
      EXIT.notFound,
    );
  }
  if (!response.ok) throw CliError.fromAnswer(body, response);
  print(ctx.io, ctx.format, body, (data) => record(flatten(data)));
}

/** `{ quotas: { maxConcurrentRuns: 5 } }` → `quotas.maxConcurrentRuns  5`. */
function flatten(value: unknown, prefix = ''): Array<[string, unknown]> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [[prefix || 'value', value]];
  }
  return Object.entries(value).flatMap(([key, inner]) =>
    flatten(inner, prefix ? `${prefix}.${key}` : key),
  );
}
