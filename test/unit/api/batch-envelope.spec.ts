import { ValidationError } from '../../../src/common';
import { readBatchEnvelope } from '../../../src/api/schedules/batch-envelope';

const schedule = {
  targetId: '00000000-0000-4000-8000-000000000001',
  runAt: '2030-01-01T00:00:00Z',
};
const item = (idempotencyKey: unknown, body: unknown = schedule) => ({
  idempotencyKey,
  schedule: body,
});

/** The field problems of a refused envelope (it must be refused). */
function problems(body: unknown): Array<{ field: string; message: string }> {
  try {
    readBatchEnvelope(body);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).errors;
  }
  throw new Error('the envelope was accepted');
}

describe('readBatchEnvelope', () => {
  it('returns the items as sent, schedules untouched (not copied)', () => {
    const body = { items: [item('a'), item('b', { ...schedule, name: 'x' })] };
    const items = readBatchEnvelope(body);
    expect(items).toHaveLength(2);
    expect(items[1].schedule).toBe(body.items[1].schedule);
    expect(items.map((i) => i.idempotencyKey)).toEqual(['a', 'b']);
  });

  it('refuses a body that is not a JSON object', () => {
    for (const body of [null, [item('a')], 'items', 3]) {
      expect(() => readBatchEnvelope(body)).toThrow('the request body must be a JSON object');
    }
  });

  it.each<[string, unknown, Array<{ field: string; message: string }>]>([
    ['items missing', {}, [{ field: 'items', message: 'items must be an array' }]],
    [
      'items not an array',
      { items: { a: 1 } },
      [{ field: 'items', message: 'items must be an array' }],
    ],
    [
      'no items',
      { items: [] },
      [{ field: 'items', message: 'items must contain at least 1 elements' }],
    ],
    [
      'more than 1,000 items',
      { items: Array.from({ length: 1001 }, (_, i) => item(`k${i}`)) },
      [{ field: 'items', message: 'items must contain no more than 1000 elements' }],
    ],
    [
      'an unknown envelope field',
      { items: [item('a')], atomic: true },
      [{ field: 'atomic', message: 'property atomic should not exist' }],
    ],
    [
      'an unknown item field, a missing key and a schedule that is not an object',
      { items: [{ ...item('a'), status: 201 }, { schedule }, item('c', [1, 2])] },
      [
        { field: 'items.0.status', message: 'property status should not exist' },
        {
          field: 'items.1.idempotencyKey',
          message: 'idempotencyKey must be 1-255 printable ASCII characters',
        },
        { field: 'items.2.schedule', message: 'schedule must be an object' },
      ],
    ],
    [
      'a key with a space, an item that is not an object',
      { items: [item('has space'), 7] },
      [
        {
          field: 'items.0.idempotencyKey',
          message: 'idempotencyKey must be 1-255 printable ASCII characters',
        },
        { field: 'items.1', message: 'each item must be an object' },
      ],
    ],
    [
      'a key of 256 characters',
      { items: [item('k'.repeat(256))] },
      [
        {
          field: 'items.0.idempotencyKey',
          message: 'idempotencyKey must be 1-255 printable ASCII characters',
        },
      ],
    ],
    [
      'a key twice (reported once)',
      { items: [item('same'), item('same'), item('same')] },
      [{ field: 'items', message: 'each item needs an idempotencyKey of its own' }],
    ],
  ])('%s', (_label, body, expected) => {
    expect(problems(body)).toEqual(expected);
  });
});
