export { AdminOnly, AUTH_MODE, Public, type AuthMode } from './auth/public.decorator';
export { Batcher, type BatcherOptions } from './batching/batcher';
export { canonicalJson, canonicalSha256 } from './canonical-json';
export { Clock } from './clock/clock';
export { SingleFlight } from './concurrency/single-flight';
export { BATCH_BODY_LIMIT, BATCH_PATH, BODY_LIMIT } from './http/body-limits';
export { requestDeadline } from './http/request-deadline';
export { isUuid, timeOrderedUuid, UUID_PATTERN } from './ids/uuid';
export { PeriodicDuty } from './loop/periodic-duty';
export { PeriodicLoop } from './loop/periodic-loop';
export { unusedListenPort } from './net/listen-port';
export { ApiProblems, FieldErrorDto, ProblemDto, RESPONSE_HEADERS } from './openapi/problem.dto';
export { decodeCursor, encodeCursor, PAGE_LIMITS, pageSize } from './pagination/page';
export {
  ConflictError,
  DomainError,
  IdempotencyKeyReusedError,
  LoadExceededError,
  NotFoundError,
  PayloadTooLargeError,
  PreconditionRequiredError,
  QuotaExceededError,
  RateLimitedError,
  ServiceUnavailableError,
  StaleRevisionError,
  UnauthorizedError,
  ValidationError,
  type DomainErrorCode,
  type FieldError,
} from './problem/domain-errors';
export { databaseUnavailable, problemOf, ProblemFilter } from './problem/problem.filter';
export {
  isDatabaseUnavailable,
  UNAVAILABLE_RETRY_AFTER_SECONDS,
} from './problem/database-unavailable';
export { PROBLEM_CONTENT_TYPE, problemType, type Problem } from './problem/problem';
export { NoControlCharacters } from './validation/no-control-characters';
export { StrictValidationPipe, validateJsonObject } from './validation/validation.pipe';
export { errorSummary } from './error-summary';
export { limitHeapGrowth } from './runtime/heap-growth';
