import { claimRefusal, type ClaimDiagnosis } from '../../../src/admission';
import {
  LEASE_EXPIRED_DETAIL,
  transitionAfterAttempt,
  transitionAfterLeaseExpiry,
  type AttemptReport,
  type HeldRun,
} from '../../../src/execution';

/** The product rules of where a run goes next: pure functions, table-driven (no database). */
describe('run transitions', () => {
  const now = new Date('2027-01-01T09:00:00Z');
  const held = (over: Partial<HeldRun> = {}): HeldRun => ({
    attempt: 1,
    maxAttempts: 3,
    retryDeadline: new Date(now.getTime() + 3600_000),
    cancelRequested: false,
    dbNow: now,
    ...over,
  });
  const report = (over: Partial<AttemptReport>): AttemptReport => ({
    outcome: 'retryable',
    error: 'target responded 503',
    mayHaveActed: false,
    ...over,
  });
  const delay = (ms: number) => () => ms;

  describe('after an attempt', () => {
    const cases: Array<[string, HeldRun, AttemptReport, object]> = [
      [
        '2xx succeeds',
        held(),
        report({ outcome: 'succeeded', error: null }),
        { state: 'SUCCEEDED', reason: null, attemptOutcome: 'succeeded' },
      ],
      [
        'a permanent failure fails at once',
        held(),
        report({ outcome: 'failed', error: '404' }),
        { state: 'FAILED', reason: 'target_rejected', detail: '404' },
      ],
      [
        'a deleted target fails with its own reason',
        held(),
        report({ outcome: 'failed', failure: 'target_missing', error: 'gone' }),
        { state: 'FAILED', reason: 'target_missing', detail: 'gone' },
      ],
      [
        'unknown stays unknown',
        held(),
        report({ outcome: 'unknown', error: 'timeout' }),
        { state: 'UNKNOWN', reason: 'outcome_unknown', detail: 'timeout' },
      ],
      [
        'retryable waits with the delay',
        held(),
        report({}),
        {
          state: 'RETRY_WAIT',
          reason: 'retryable_failure',
          detail: 'target responded 503',
          retryDelayMs: 250,
          attemptOutcome: 'retryable',
        },
      ],
      [
        'the last attempt fails',
        held({ attempt: 3 }),
        report({}),
        {
          state: 'FAILED',
          reason: 'attempts_exhausted',
          detail: 'target responded 503; no attempts left (3 of 3)',
        },
      ],
      [
        'the last attempt that may have landed is UNKNOWN',
        held({ attempt: 3 }),
        report({ mayHaveActed: true }),
        { state: 'UNKNOWN', reason: 'attempts_exhausted' },
      ],
      [
        'a retry past the deadline fails',
        held({ retryDeadline: new Date(now.getTime() + 100) }),
        report({}),
        { state: 'FAILED', reason: 'retry_deadline_exceeded', retryDelayMs: null },
      ],
      [
        'a cancel request stops retries',
        held({ cancelRequested: true }),
        report({}),
        { state: 'CANCELLED', reason: 'cancelled_by_request' },
      ],
      [
        'a confirmed success stays a success despite a cancel request',
        held({ cancelRequested: true }),
        report({ outcome: 'succeeded', error: null }),
        { state: 'SUCCEEDED' },
      ],
      [
        'cancelled in flight says the effect may have happened',
        held(),
        report({ outcome: 'cancelled', mayHaveActed: true }),
        {
          state: 'CANCELLED',
          reason: 'cancelled_by_request',
          detail: expect.stringMatching(/may already have happened/),
        },
      ],
      [
        'cancelled before sending says so',
        held(),
        report({ outcome: 'cancelled', mayHaveActed: false }),
        {
          state: 'CANCELLED',
          detail: expect.stringMatching(/before attempt 1 reached the target/),
        },
      ],
    ];
    it.each(cases)('%s', (_label, run, attemptReport, expected) => {
      expect(transitionAfterAttempt(run, attemptReport, delay(250))).toMatchObject(expected);
    });
  });

  describe('after a lease expired', () => {
    it('retries a deduplicating target, marks the attempt lease_lost', () => {
      expect(transitionAfterLeaseExpiry(held(), true, delay(0))).toMatchObject({
        state: 'RETRY_WAIT',
        reason: 'lease_expired',
        retryDelayMs: 0,
        attemptOutcome: 'lease_lost',
      });
    });
    it('is UNKNOWN for any other target', () => {
      expect(transitionAfterLeaseExpiry(held(), false, delay(0))).toEqual({
        state: 'UNKNOWN',
        reason: 'lease_expired',
        detail: LEASE_EXPIRED_DETAIL,
        retryDelayMs: null,
        attemptOutcome: 'lease_lost',
      });
    });
    it('is UNKNOWN, not FAILED, on the last attempt of a deduplicating target', () => {
      expect(transitionAfterLeaseExpiry(held({ attempt: 3 }), true, delay(0))).toMatchObject({
        state: 'UNKNOWN',
      });
    });
    it('ends CANCELLED when cancellation was requested', () => {
      expect(
        transitionAfterLeaseExpiry(held({ cancelRequested: true }), true, delay(0)).state,
      ).toBe('CANCELLED');
    });
  });

  describe('claim refusals', () => {
    const d = (over: Partial<ClaimDiagnosis>): ClaimDiagnosis => ({
      state: 'QUEUED',
      admitted: false,
      startDeadlinePassed: false,
      notDue: false,
      scheduleCancelled: false,
      cancelRequested: false,
      attemptsExhausted: false,
      deadlinePassed: false,
      tenantAtCapacity: false,
      overlapping: false,
      rateWaitMs: 0,
      targetGone: false,
      targetBackoffMs: 0,
      targetAtCapacity: false,
      ...over,
    });
    const cases: Array<[string, ClaimDiagnosis | null, string | null]> = [
      ['missing', null, 'not_found'],
      ['running', d({ state: 'RUNNING' }), 'already_claimed'],
      ['final', d({ state: 'SUCCEEDED' }), 'finished'],
      [
        'cancelled beats everything waiting',
        d({ scheduleCancelled: true, notDue: true, tenantAtCapacity: true }),
        'schedule_cancelled',
      ],
      ['cancelled by request', d({ cancelRequested: true }), 'cancelled_by_request'],
      [
        'exhausted before not due',
        d({ deadlinePassed: true, notDue: true }),
        'retry_deadline_exceeded',
      ],
      ['no attempts left', d({ attemptsExhausted: true }), 'attempts_exhausted'],
      ['not due before throttled', d({ notDue: true, tenantAtCapacity: true }), 'not_due'],
      ['overlap', d({ overlapping: true, tenantAtCapacity: true }), 'overlap'],
      ['throttled', d({ tenantAtCapacity: true }), 'throttled_concurrency'],
      ['rate before nothing', d({ rateWaitMs: 120 }), 'throttled_rate'],
      [
        'concurrency before rate',
        d({ tenantAtCapacity: true, rateWaitMs: 5 }),
        'throttled_concurrency',
      ],
      ['nothing blocks any more', d({}), null],
      ['a disabled target ends it', d({ targetGone: true, overlapping: true }), 'target_gone'],
      [
        "the target's backoff holds back even an admitted run",
        d({ admitted: true, targetBackoffMs: 800 }),
        'target_backoff',
      ],
      [
        'a full target, once the tenant affords it',
        d({ targetAtCapacity: true }),
        'throttled_target',
      ],
      [
        "the tenant's budget before the target's",
        d({ tenantAtCapacity: true, targetAtCapacity: true }),
        'throttled_concurrency',
      ],
      [
        'an admitted run holds its target permit',
        d({ admitted: true, targetAtCapacity: true }),
        null,
      ],
      [
        'an admitted run holds its budget',
        d({ admitted: true, tenantAtCapacity: true, rateWaitMs: 9 }),
        null,
      ],
      [
        'past its start deadline',
        d({ startDeadlinePassed: true, notDue: true }),
        'deadline_exceeded',
      ],
      [
        'cancelled beats the start deadline',
        d({ startDeadlinePassed: true, cancelRequested: true }),
        'cancelled_by_request',
      ],
    ];
    it.each(cases)('%s', (_label, diagnosis, expected) => {
      expect(claimRefusal(diagnosis)).toBe(expected);
    });
  });
});
