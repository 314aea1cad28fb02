import { type FieldError, ValidationError } from '../../common';
import { SCHEDULE_LIMITS } from '../../schedules';
import { IDEMPOTENCY_KEY_PATTERN } from '../common/required-header';

/** One item of POST /schedules/batch as sent: its key and the body of its create. */
export interface BatchItem {
  idempotencyKey: string;
  schedule: Record<string, unknown>;
}

const ENVELOPE_FIELDS = new Set(['items']);
const ITEM_FIELDS = new Set(['idempotencyKey', 'schedule']);

/**
 * The envelope of POST /schedules/batch (BatchCreateSchedulesDto documents it), checked here
 * rather than by the global pipe: class-transformer would copy every item's schedule, deep, only
 * for each schedule to be copied and checked again on its own as the body of a create (a bad
 * schedule is its item's 400, a bad envelope the whole request's). That copy and the walk over
 * it were a third of a 1,000-item batch's validation. Every field problem is reported at once,
 * as the pipe does; nothing of the body is kept beyond the items.
 */
export function readBatchEnvelope(body: unknown): BatchItem[] {
  if (!isJsonObject(body)) throw new ValidationError('the request body must be a JSON object');
  const errors: FieldError[] = unknownFields(body, ENVELOPE_FIELDS, '');
  const items = body.items;
  const max = SCHEDULE_LIMITS.maxBatchItems;
  if (!Array.isArray(items)) {
    errors.push({ field: 'items', message: 'items must be an array' });
  } else if (items.length === 0) {
    errors.push({ field: 'items', message: 'items must contain at least 1 elements' });
  } else if (items.length > max) {
    errors.push({ field: 'items', message: `items must contain no more than ${max} elements` });
  } else {
    const keys = new Set<string>();
    let repeated = false;
    items.forEach((item: unknown, i) => {
      const at = `items.${i}`;
      if (!isJsonObject(item)) {
        errors.push({ field: at, message: 'each item must be an object' });
        return;
      }
      errors.push(...unknownFields(item, ITEM_FIELDS, `${at}.`));
      const key = item.idempotencyKey;
      if (typeof key !== 'string' || !IDEMPOTENCY_KEY_PATTERN.test(key)) {
        errors.push({
          field: `${at}.idempotencyKey`,
          message: 'idempotencyKey must be 1-255 printable ASCII characters',
        });
      } else {
        repeated ||= keys.has(key);
        keys.add(key);
      }
      if (!isJsonObject(item.schedule)) {
        errors.push({ field: `${at}.schedule`, message: 'schedule must be an object' });
      }
    });
    if (repeated) {
      errors.push({ field: 'items', message: 'each item needs an idempotencyKey of its own' });
    }
  }
  if (errors.length > 0) throw new ValidationError('the request is invalid', errors);
  return items as BatchItem[];
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function unknownFields(
  value: Record<string, unknown>,
  known: ReadonlySet<string>,
  prefix: string,
): FieldError[] {
  return Object.keys(value)
    .filter((field) => !known.has(field))
    .map((field) => ({
      field: `${prefix}${field}`,
      message: `property ${field} should not exist`,
    }));
}
