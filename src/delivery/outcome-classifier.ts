import type { TargetResponse } from './target-invoker';

export type AttemptOutcome = 'succeeded' | 'retryable' | 'failed' | 'unknown';

export interface OutcomeClassification {
  outcome: AttemptOutcome;
  /** Human-readable, stored with the attempt and shown to the tenant. */
  reason: string;
  httpStatus?: number;
  retryAfterMs?: number | null;
}

export interface OutcomeContext {
  /** The target honours Idempotency-Key, so a repeat of an attempt that may have landed is safe. */
  deduplicates: boolean;
}

function classifyStatus(
  status: number,
  retryAfterMs: number | null,
  snippet: string,
  location: string | undefined,
): OutcomeClassification {
  const detail = snippet.trim() === '' ? '' : `: ${snippet.trim().slice(0, 200)}`;
  if (status >= 200 && status <= 299) {
    return { outcome: 'succeeded', reason: `target responded ${status}`, httpStatus: status };
  }
  if (status === 408 || status === 429 || (status >= 500 && status <= 599)) {
    const what =
      status === 429 ? 'rate limited' : status === 408 ? 'request timeout' : 'server error';
    return {
      outcome: 'retryable',
      reason: `target responded ${status} (${what})${detail}`,
      httpStatus: status,
      retryAfterMs,
    };
  }
  if (status >= 300 && status <= 399) {
    return {
      outcome: 'failed',
      reason: `target responded ${status} (redirect${
        location ? ` to ${JSON.stringify(location.slice(0, 300))}` : ''
      }); redirects are not followed, register the final URL instead`,
      httpStatus: status,
    };
  }
  if (status >= 400 && status <= 499) {
    return {
      outcome: 'failed',
      reason: `target responded ${status} (client error)${detail}`,
      httpStatus: status,
    };
  }
  return {
    outcome: 'failed',
    reason: `target responded with unexpected status ${status}${detail}`,
    httpStatus: status,
  };
}

/**
 * Product rules for one attempt's result.
 *
 * The split that matters is whether the target may have acted: a request that provably never
 * left (`not_sent`) is always safe to repeat, while one that may have landed (`maybe_sent`) is
 * repeated only for targets that deduplicate by Idempotency-Key; otherwise it is 'unknown' and
 * left for a human rather than risking a double charge, double email, etc.
 */
export function classifyOutcome(
  response: TargetResponse,
  ctx: OutcomeContext,
): OutcomeClassification {
  switch (response.kind) {
    case 'response':
      return classifyStatus(
        response.status,
        response.retryAfterMs,
        response.bodySnippet,
        response.headers.location,
      );
    case 'not_sent':
      switch (response.code) {
        // Configuration problems: repeating cannot succeed until someone changes the target.
        case 'address_refused':
        case 'invalid_url':
        case 'invalid_request':
          return { outcome: 'failed', reason: `request not sent: ${response.error}` };
        default:
          return {
            outcome: 'retryable',
            reason: `request not sent (${response.code}): ${response.error}`,
            retryAfterMs: null,
          };
      }
    case 'maybe_sent':
      return ctx.deduplicates
        ? {
            outcome: 'retryable',
            reason: `request may have been delivered (${response.code}); retrying because the target deduplicates by Idempotency-Key: ${response.error}`,
            retryAfterMs: null,
          }
        : {
            outcome: 'unknown',
            reason: `request may have been delivered (${response.code}) and the target does not deduplicate, so it is not retried automatically: ${response.error}`,
          };
  }
}
