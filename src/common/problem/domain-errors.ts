/**
 * Errors that domain code throws. Each names what went wrong in the caller's terms; the one
 * ProblemFilter maps them to HTTP. Workers, repositories and services never throw HttpExceptions.
 */
export type DomainErrorCode =
  | 'validation'
  | 'unauthorized'
  | 'not_found'
  | 'conflict'
  | 'stale_revision'
  | 'precondition_required'
  | 'idempotency_key_reused'
  | 'quota_exceeded'
  | 'load_exceeded'
  | 'rate_limited'
  | 'payload_too_large'
  | 'unavailable';

export interface FieldError {
  field: string;
  message: string;
}

export abstract class DomainError extends Error {
  abstract readonly code: DomainErrorCode;
  /** Extra members for the problem document (RFC 9457 extensions). */
  readonly extensions: Record<string, unknown> = {};
}

export class ValidationError extends DomainError {
  readonly code = 'validation';
  constructor(
    detail: string,
    readonly errors: FieldError[] = [],
  ) {
    super(detail);
  }
}

export class UnauthorizedError extends DomainError {
  readonly code = 'unauthorized';
}

export class NotFoundError extends DomainError {
  readonly code = 'not_found';
  constructor(resource: string, id: string) {
    super(`${resource} ${id} was not found`);
  }
}

export class ConflictError extends DomainError {
  readonly code = 'conflict';
  constructor(detail: string, extensions: Record<string, unknown> = {}) {
    super(detail);
    Object.assign(this.extensions, extensions);
  }
}

export class StaleRevisionError extends DomainError {
  readonly code = 'stale_revision';
  constructor(
    readonly expected: number,
    readonly current: number,
  ) {
    super(`revision ${expected} is stale; the current revision is ${current}`);
    this.extensions.currentRevision = current;
  }
}

export class PreconditionRequiredError extends DomainError {
  readonly code = 'precondition_required';
}

export class IdempotencyKeyReusedError extends DomainError {
  readonly code = 'idempotency_key_reused';
  constructor() {
    super('this Idempotency-Key was already used with a different request body');
  }
}

export class QuotaExceededError extends DomainError {
  readonly code = 'quota_exceeded';
  constructor(quota: string, limit: number) {
    super(`the tenant's ${quota} quota (${limit}) is exhausted`);
    this.extensions.quota = quota;
    this.extensions.limit = limit;
  }
}

/**
 * A schedule that would make the tenant's busiest projected minute need more runs than its
 * dispatchRatePerSecond allows in a minute: refused rather than absorbed as lateness.
 */
export class LoadExceededError extends DomainError {
  readonly code = 'load_exceeded';
  constructor(minute: Date, projectedRuns: number, allowedRuns: number) {
    super(
      `the schedule would make the minute starting ${minute.toISOString()} need ` +
        `${projectedRuns} runs; the tenant's dispatchRatePerSecond allows ${allowedRuns} a ` +
        'minute (priority "low" schedules are exempt: they agree to wait)',
    );
    this.extensions.minute = minute.toISOString();
    this.extensions.projectedRuns = projectedRuns;
    this.extensions.allowedRuns = allowedRuns;
  }
}

export class RateLimitedError extends DomainError {
  readonly code = 'rate_limited';
  constructor(readonly retryAfterSeconds: number) {
    super(`too many requests; retry after ${retryAfterSeconds} s`);
  }
}

export class PayloadTooLargeError extends DomainError {
  readonly code = 'payload_too_large';
}

/**
 * The database could not be reached in time (no primary during a failover, a server that does
 * not answer). The request may or may not have taken effect: retry it (with its Idempotency-Key
 * for a create) after `retryAfterSeconds`.
 */
export class ServiceUnavailableError extends DomainError {
  readonly code = 'unavailable';
  constructor(
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail);
  }
}
