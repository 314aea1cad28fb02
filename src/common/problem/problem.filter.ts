import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { errorSummary } from '../error-summary';
import { isDatabaseUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from './database-unavailable';
import { DomainError, FieldError, ServiceUnavailableError } from './domain-errors';
import { Problem, PROBLEM_CONTENT_TYPE, problemType } from './problem';

interface Mapped {
  problem: Problem;
  headers?: Record<string, string>;
}

/**
 * The one place where errors become HTTP. Domain errors map through an exhaustive switch; Nest
 * and body-parser errors keep their status; anything else is a 500 whose detail says nothing
 * about internals (the stack goes to the log, never to the client).
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger(ProblemFilter.name);

  catch(error: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    // The request deadline answered already; the handler's late answer has nowhere to go.
    if (response.headersSent && (error as { code?: unknown }).code === 'ERR_HTTP_HEADERS_SENT') {
      return;
    }
    const { problem, headers } = this.map(error);
    if (problem.status === 503) {
      this.logger.warn({ err: errorSummary(error), path: request.path }, 'request unavailable');
    } else if (problem.status >= 500) {
      const stack = error instanceof Error ? error.stack : undefined;
      this.logger.error(
        { err: { ...errorSummary(error), stack }, path: request.path },
        'request failed',
      );
    }
    if (response.headersSent) return;
    for (const [name, value] of Object.entries(headers ?? {})) response.setHeader(name, value);
    response.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
  }

  private map(error: unknown): Mapped {
    if (error instanceof DomainError) return mapDomainError(error);
    if (error instanceof HttpException) return mapHttpException(error);
    // A database that is away is not our bug: 503 and when to come back, never a 500.
    if (isDatabaseUnavailable(error)) return mapDomainError(databaseUnavailable());
    const bodyParserError = mapBodyParserError(error);
    if (bodyParserError) return bodyParserError;
    return {
      problem: {
        type: problemType('internal'),
        title: 'Internal Server Error',
        status: 500,
        detail: 'the server could not complete the request',
      },
    };
  }
}

/** What a request learns when the database is away (its cause stays in the log). */
export function databaseUnavailable(): ServiceUnavailableError {
  return new ServiceUnavailableError(
    'the database is unavailable (no writable server reachable); retry later',
    UNAVAILABLE_RETRY_AFTER_SECONDS,
  );
}

/** The problem document of a domain error (a batch item's, or a whole answer's). */
export function problemOf(error: DomainError): Problem {
  return mapDomainError(error).problem;
}

function mapDomainError(error: DomainError): Mapped {
  const base = (status: number, slug: string, title: string): Problem => ({
    type: problemType(slug),
    title,
    status,
    detail: error.message,
    ...error.extensions,
  });
  switch (error.code) {
    case 'validation':
      return {
        problem: {
          ...base(400, 'validation', 'Invalid request'),
          errors: (error as unknown as { errors: FieldError[] }).errors,
        },
      };
    case 'unauthorized':
      return {
        problem: base(401, 'unauthorized', 'Unauthorized'),
        headers: { 'WWW-Authenticate': 'Bearer' },
      };
    case 'not_found':
      return { problem: base(404, 'not-found', 'Not Found') };
    case 'conflict':
      return { problem: base(409, 'conflict', 'Conflict') };
    case 'stale_revision':
      return { problem: base(409, 'stale-revision', 'Stale revision') };
    case 'precondition_required':
      return { problem: base(428, 'precondition-required', 'Precondition Required') };
    case 'idempotency_key_reused':
      return { problem: base(422, 'idempotency-key-reused', 'Idempotency-Key reused') };
    case 'quota_exceeded':
      return { problem: base(403, 'quota-exceeded', 'Quota exceeded') };
    case 'load_exceeded':
      return { problem: base(422, 'load-exceeded', 'Projected load exceeds the dispatch rate') };
    case 'rate_limited': {
      const seconds = (error as unknown as { retryAfterSeconds: number }).retryAfterSeconds;
      return {
        problem: base(429, 'rate-limited', 'Too Many Requests'),
        headers: { 'Retry-After': String(seconds) },
      };
    }
    case 'payload_too_large':
      return { problem: base(413, 'payload-too-large', 'Payload Too Large') };
    case 'unavailable': {
      const seconds = (error as unknown as { retryAfterSeconds: number }).retryAfterSeconds;
      return {
        problem: base(503, 'unavailable', 'Service Unavailable'),
        headers: { 'Retry-After': String(seconds) },
      };
    }
    default: {
      const unreachable: never = error.code;
      throw new Error(`unmapped domain error ${String(unreachable)}`);
    }
  }
}

function mapHttpException(error: HttpException): Mapped {
  const status = error.getStatus();
  const body = error.getResponse();
  const title = titleFor(status);
  let detail = error.message;
  if (status === 404 && /^Cannot [A-Z]+ /.test(detail)) detail = 'no such route';
  if (typeof body === 'object' && body !== null && 'message' in body) {
    const message = (body as { message: unknown }).message;
    if (typeof message === 'string') detail = message;
  }
  const problem: Problem = { type: problemType(slugFor(status)), title, status, detail };
  if (status >= 500)
    problem.detail = status === 503 ? 'the service is not ready' : 'internal error';
  if (status === 503 && typeof body === 'object' && body !== null && 'details' in body) {
    problem.checks = (body as { details: unknown }).details;
  }
  return { problem };
}

/** body-parser errors carry `type` and `status`; they are the client's fault, not ours. */
function mapBodyParserError(error: unknown): Mapped | null {
  if (typeof error !== 'object' || error === null) return null;
  const { type, status } = error as { type?: unknown; status?: unknown };
  if (typeof type !== 'string' || typeof status !== 'number') return null;
  switch (type) {
    case 'entity.too.large':
      return simple(413, 'payload-too-large', 'Payload Too Large', 'the request body is too large');
    case 'entity.parse.failed':
      return simple(400, 'malformed-json', 'Malformed JSON', 'the request body is not valid JSON');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return simple(
        415,
        'unsupported-media-type',
        'Unsupported Media Type',
        'unsupported encoding',
      );
    default:
      return status >= 400 && status < 500
        ? simple(status, slugFor(status), titleFor(status), 'the request body could not be read')
        : null;
  }
}

function simple(status: number, slug: string, title: string, detail: string): Mapped {
  return { problem: { type: problemType(slug), title, status, detail } };
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  503: 'Service Unavailable',
};

function titleFor(status: number): string {
  return TITLES[status] ?? (status >= 500 ? 'Internal Server Error' : 'Client Error');
}

function slugFor(status: number): string {
  return titleFor(status)
    .toLowerCase()
    .replace(/[^a-z]+/g, '-');
}
