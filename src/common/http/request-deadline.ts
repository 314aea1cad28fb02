import type { NextFunction, Request, Response } from 'express';
import { ServiceUnavailableError } from '../problem/domain-errors';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../problem/database-unavailable';
import { PROBLEM_CONTENT_TYPE } from '../problem/problem';
import { problemOf } from '../problem/problem.filter';

/**
 * The bound on every request: one that has not been answered within `ms` (its statements wait
 * on a server that stopped answering, or on a pool whose connections do) gets a 503 with
 * Retry-After instead of a hang. Its work may still finish or not, so the answer says the
 * outcome is unknown: a create retried with its Idempotency-Key replays, an edit with If-Match
 * sees the revision it made. Runs before guards, so authentication's lookup is bounded too.
 */
export function requestDeadline(ms: number) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const timer = setTimeout(() => {
      if (response.headersSent) return;
      const error = new ServiceUnavailableError(
        `the request did not complete within ${ms} ms (the database may be unavailable or ` +
          'failing over); it may or may not have taken effect: retry it, with the same ' +
          'Idempotency-Key for a create',
        UNAVAILABLE_RETRY_AFTER_SECONDS,
      );
      response.setHeader('Retry-After', String(error.retryAfterSeconds));
      response
        .status(503)
        .type(PROBLEM_CONTENT_TYPE)
        .send(JSON.stringify(problemOf(error)));
    }, ms);
    timer.unref();
    const clear = () => clearTimeout(timer);
    response.once('finish', clear);
    response.once('close', clear);
    next();
  };
}
