import { QueryFailedError } from 'typeorm';

/** The Postgres error codes (SQLSTATE) the repositories act on; any other failure is thrown on. */
export const SQL_STATE = {
  /** A unique constraint refused the row. */
  uniqueViolation: '23505',
  /** A lock was not granted within lock_timeout. */
  lockNotAvailable: '55P03',
} as const;
export type SqlState = (typeof SQL_STATE)[keyof typeof SQL_STATE];

/** A failed statement's SQLSTATE and the constraint it names, if any; null for other errors. */
export function sqlFailureOf(error: unknown): { code: string; constraint: string | null } | null {
  if (!(error instanceof QueryFailedError)) return null;
  const driverError = error.driverError as { code?: unknown; constraint?: unknown };
  if (typeof driverError?.code !== 'string') return null;
  return {
    code: driverError.code,
    constraint: typeof driverError.constraint === 'string' ? driverError.constraint : null,
  };
}

/** Whether `error` is a failed statement with SQLSTATE `state`. */
export const failedWith = (error: unknown, state: SqlState): boolean =>
  sqlFailureOf(error)?.code === state;
