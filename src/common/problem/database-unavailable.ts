/** What a client is told to wait before retrying while no primary is reachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Codes of a database that is away, not of a request that is wrong: our own connection errors
 * (no writable server, a read-only one, a primary cut off by the locator), the socket's, and
 * Postgres's connection-exception class (08), shutdowns (57P01-57P03) and a write refused by a
 * read-only server (25006, a demoted primary).
 */
const UNAVAILABLE_CODES = new Set([
  'DUELINE_NO_WRITABLE_HOST',
  'DUELINE_READ_ONLY_SERVER',
  'DUELINE_PRIMARY_LOST',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  '57P01',
  '57P02',
  '57P03',
  '25006',
]);

/** Messages `pg` and pg-pool use for a lost or timed-out connection (they carry no code). */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /^timeout expired$/,
  /^timeout exceeded when trying to connect$/,
  /not queryable/,
  /^Query read timeout$/,
];

/**
 * True when an error says the database could not be reached or would not take writes: such a
 * request is answered 503 with Retry-After (never a 500), and retrying it later is the cure.
 * Looks through the wrappers TypeORM and pg-pool put around the driver's error.
 */
export function isDatabaseUnavailable(error: unknown, depth = 0): boolean {
  if (depth > 4 || typeof error !== 'object' || error === null) return false;
  const { code, message, driverError, cause } = error as {
    code?: unknown;
    message?: unknown;
    driverError?: unknown;
    cause?: unknown;
  };
  if (typeof code === 'string' && (UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) {
    return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((m) => m.test(message))) {
    return true;
  }
  return isDatabaseUnavailable(driverError, depth + 1) || isDatabaseUnavailable(cause, depth + 1);
}
