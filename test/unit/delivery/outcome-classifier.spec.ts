import { type AttemptOutcome, classifyOutcome } from '../../../src/delivery/outcome-classifier';
import type {
  MaybeSentCode,
  NotSentCode,
  TargetResponse,
} from '../../../src/delivery/target-invoker';

const response = (status: number, retryAfterMs: number | null = null): TargetResponse => ({
  kind: 'response',
  status,
  retryAfterMs,
  durationMs: 12,
  bodySnippet: '',
  bodyTruncated: false,
  headers: {},
});
const notSent = (code: NotSentCode): TargetResponse => ({
  kind: 'not_sent',
  code,
  error: `boom (${code})`,
  durationMs: 3,
});
const maybeSent = (code: MaybeSentCode): TargetResponse => ({
  kind: 'maybe_sent',
  code,
  error: `boom (${code})`,
  durationMs: 200,
});

describe('classifyOutcome', () => {
  const cases: [string, TargetResponse, boolean, AttemptOutcome][] = [
    ['200', response(200), false, 'succeeded'],
    ['201', response(201), false, 'succeeded'],
    ['204', response(204), false, 'succeeded'],
    ['299', response(299), false, 'succeeded'],
    ['101', response(101), false, 'failed'],
    ['301', response(301), true, 'failed'],
    ['302', response(302), false, 'failed'],
    ['304', response(304), false, 'failed'],
    ['400', response(400), true, 'failed'],
    ['401', response(401), false, 'failed'],
    ['404', response(404), false, 'failed'],
    ['409', response(409), false, 'failed'],
    ['422', response(422), false, 'failed'],
    ['408', response(408), false, 'retryable'],
    ['429', response(429), false, 'retryable'],
    ['500', response(500), false, 'retryable'],
    ['502', response(502), false, 'retryable'],
    ['503', response(503), false, 'retryable'],
    ['504', response(504), false, 'retryable'],
    ['599', response(599), false, 'retryable'],
    ['600', response(600), false, 'failed'],
    ['not_sent dns_failed', notSent('dns_failed'), false, 'retryable'],
    ['not_sent connect_refused', notSent('connect_refused'), false, 'retryable'],
    ['not_sent connect_timeout', notSent('connect_timeout'), false, 'retryable'],
    ['not_sent tls_failed', notSent('tls_failed'), false, 'retryable'],
    ['not_sent aborted_before_send', notSent('aborted_before_send'), false, 'retryable'],
    ['not_sent address_refused', notSent('address_refused'), true, 'failed'],
    ['not_sent invalid_url', notSent('invalid_url'), true, 'failed'],
    ['not_sent invalid_request', notSent('invalid_request'), true, 'failed'],
    ['maybe_sent timeout, dedup', maybeSent('timeout'), true, 'retryable'],
    ['maybe_sent timeout, no dedup', maybeSent('timeout'), false, 'unknown'],
    ['maybe_sent reset, dedup', maybeSent('reset'), true, 'retryable'],
    ['maybe_sent reset, no dedup', maybeSent('reset'), false, 'unknown'],
    ['maybe_sent aborted, no dedup', maybeSent('aborted'), false, 'unknown'],
    ['maybe_sent protocol_error, dedup', maybeSent('protocol_error'), true, 'retryable'],
    ['maybe_sent protocol_error, no dedup', maybeSent('protocol_error'), false, 'unknown'],
  ];

  it.each(cases)('%s -> %s', (_label, input, deduplicates, expected) => {
    const result = classifyOutcome(input, { deduplicates });
    expect(result.outcome).toBe(expected);
    expect(result.reason).toEqual(expect.any(String));
    expect(result.reason.length).toBeGreaterThan(0);
    if (input.kind === 'response') expect(result.httpStatus).toBe(input.status);
    else expect(result.httpStatus).toBeUndefined();
  });

  it('passes Retry-After through for retryable responses', () => {
    expect(classifyOutcome(response(503, 30_000), { deduplicates: false })).toEqual({
      outcome: 'retryable',
      reason: 'target responded 503 (server error)',
      httpStatus: 503,
      retryAfterMs: 30_000,
    });
  });

  it('explains redirects and includes a trimmed body snippet for client errors', () => {
    expect(classifyOutcome(response(302), { deduplicates: false }).reason).toMatch(
      /redirects are not followed/,
    );
    const moved = { ...response(301), headers: { location: 'https://elsewhere.example/x' } };
    expect(classifyOutcome(moved as TargetResponse, { deduplicates: true })).toMatchObject({
      outcome: 'failed',
      reason: expect.stringContaining('redirect to "https://elsewhere.example/x"'),
    });
    const withBody = { ...response(422), bodySnippet: ` ${'x'.repeat(500)} ` } as TargetResponse;
    const reason = classifyOutcome(withBody, { deduplicates: false }).reason;
    expect(reason).toBe(`target responded 422 (client error): ${'x'.repeat(200)}`);
  });

  it('says why a maybe-sent attempt is not retried', () => {
    expect(classifyOutcome(maybeSent('timeout'), { deduplicates: false }).reason).toMatch(
      /may have been delivered .* not retried automatically/,
    );
  });
});
