import type { CommandContext } from './context';

/** Pages a `--all` list reads at most (100 items each): a bound on the loop. */
const MAX_PAGES = 100;

/**
 * One page, or with `--all` every page (progress on stderr, so stdout stays parseable), up to
 * MAX_PAGES pages.
 */
export async function collect<T>(
  ctx: CommandContext,
  noun: string,
  fetchPage: (
    cursor: string | undefined,
    limit: number | undefined,
  ) => Promise<{
    items: T[];
    nextCursor: string | null;
  }>,
  limit: number | undefined,
): Promise<T[]> {
  if (!ctx.flags.all) return (await fetchPage(undefined, limit)).items;
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 1; page <= MAX_PAGES; page++) {
    const answer = await fetchPage(cursor, 100);
    items.push(...answer.items);
    if (!answer.nextCursor) return items;
    ctx.io.err(`fetched ${items.length} ${noun}…`);
    cursor = answer.nextCursor;
  }
  ctx.io.err(`stopped after ${MAX_PAGES} pages (${items.length} ${noun}); narrow the query`);
  return items;
}
