/**
 * Resource ids are UUIDs, in the canonical spelling only: Postgres would accept braces or
 * missing hyphens, but an id that reaches the database in another spelling must not be told
 * apart from a missing one.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
