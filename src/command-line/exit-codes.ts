/**
 * The CLI's exit codes, by outcome, so a script can branch on them. Documented in `--help` and
 * the README; a code never changes meaning.
 */
export const EXIT = {
  ok: 0,
  /** the server failed (5xx), could not be reached, or answered something we cannot read */
  failure: 1,
  /** the command line itself is wrong (unknown command, missing argument) */
  usage: 2,
  /** 400/413/422: the server refused the input */
  invalid: 3,
  /** 401/403: missing or wrong key, or a quota */
  denied: 4,
  /** 404: no such resource (or another tenant's) */
  notFound: 5,
  /** 409/428: conflict with the current state or revision */
  conflict: 6,
  /** 429: rate limited */
  rateLimited: 7,
  /** `--wait` saw the run end without success (FAILED, UNKNOWN, SKIPPED, CANCELLED) */
  runNotSucceeded: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.denied;
  if (status === 404) return EXIT.notFound;
  if (status === 409 || status === 428) return EXIT.conflict;
  if (status === 429) return EXIT.rateLimited;
  if (status >= 400 && status < 500) return EXIT.invalid;
  return EXIT.failure;
}

export const EXIT_CODES_HELP = `Exit codes:
  0  success
  1  server error, unreachable server or unreadable answer
  2  wrong command line
  3  input refused (400, 413, 422)
  4  not authorised (401) or quota exceeded (403)
  5  not found (404)
  6  conflict (409, 428)
  7  rate limited (429)
  8  --wait: the run ended without succeeding`;
