import { ValidationError } from '../problem/domain-errors';
import { isUuid } from '../ids/uuid';

/** Every list answers at most `max` items a page, `default` when the caller does not say. */
export const PAGE_LIMITS = { default: 50, max: 100 } as const;

/** The page size to read: the caller's, within PAGE_LIMITS. */
export function pageSize(requested: number | undefined): number {
  return Math.min(Math.max(1, requested ?? PAGE_LIMITS.default), PAGE_LIMITS.max);
}

/**
 * List cursors are opaque to clients: base64url of the id of the last item returned. Each list
 * resumes after that item's stored row (its keyset position in the database), so positions
 * never lose the microseconds a JavaScript Date would round away.
 */
export function encodeCursor(afterId: string | null): string | null {
  return afterId === null ? null : Buffer.from(afterId, 'utf8').toString('base64url');
}

const ENCODED = /^[A-Za-z0-9_-]{1,200}$/;

/** The id a cursor carries; anything this API did not issue is a 400 problem. */
export function decodeCursor(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const id = ENCODED.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  if (!isUuid(id)) {
    throw new ValidationError('cursor is not one this API issued', [
      { field: 'cursor', message: 'cursor is malformed' },
    ]);
  }
  return id.toLowerCase();
}
