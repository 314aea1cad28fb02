import { PreconditionRequiredError, ValidationError } from '../../common';

/** An Idempotency-Key: 1..255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** Idempotency-Key: required, 1..255 printable ASCII characters. */
export function requireIdempotencyKey(value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new ValidationError('the Idempotency-Key header is required', [
      {
        field: 'Idempotency-Key',
        message: 'required: a unique key per logical request, e.g. a UUID',
      },
    ]);
  }
  if (!IDEMPOTENCY_KEY_PATTERN.test(value)) {
    throw new ValidationError(
      'the Idempotency-Key header must be 1-255 printable ASCII characters',
    );
  }
  return value;
}

/** If-Match: required for edits (428 without it). */
export function requireIfMatch(value: string | undefined): string {
  if (value === undefined || value === '') {
    throw new PreconditionRequiredError('If-Match with the schedule revision you read is required');
  }
  return value;
}
