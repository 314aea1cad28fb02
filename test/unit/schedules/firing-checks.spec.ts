import { ValidationError } from '../../../src/common';
import {
  buildDefinition,
  FiringChecks,
  nextDueAfter,
} from '../../../src/schedules/schedule-definition';

describe('buildDefinition with shared firing checks (a batch)', () => {
  const now = new Date('2027-03-01T12:00:00Z');
  const base = { name: 'n', targetId: 't', timezone: 'Europe/Berlin' };

  const problems = (cron: string, checks?: FiringChecks, extra: object = {}) => {
    try {
      buildDefinition({ ...base, cron, ...extra }, now, checks);
      return [];
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      return error.errors;
    }
  };

  it('checks a recurrence once and answers every schedule that shares it alike', () => {
    const checks = new FiringChecks(now);
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 0 30 2 *', checks)).toEqual(problems('0 0 30 2 *'));
    expect(problems('0 0 30 2 *', checks)).toHaveLength(1);
    expect(problems('* * * * * *', checks, { dstPolicy: { repeated: 'both' } })).toEqual([]);
    expect(checks.size).toBe(3);
  });

  it('knows the first due instant of the recurrences it checked, at its instant only', () => {
    const checks = new FiringChecks(now);
    const definition = buildDefinition({ ...base, cron: '0 9 * * *' }, now, checks);
    expect(nextDueAfter(definition, now, checks)).toEqual(nextDueAfter(definition, now));
    expect(nextDueAfter(definition, now, checks)).toEqual(new Date('2027-03-02T08:00:00Z'));
    const later = new Date('2027-03-02T09:00:00Z');
    expect(nextDueAfter(definition, later, checks)).toEqual(new Date('2027-03-03T08:00:00Z'));
  });

  it('tells recurrences apart by timezone, DST policy and bounds', () => {
    const checks = new FiringChecks(now);
    const endAt = new Date('2027-03-01T12:30:00Z');
    expect(problems('0 9 * * *', checks)).toEqual([]);
    // Same cron, but bounds under which it never fires: its own check, its own answer.
    expect(problems('0 9 * * *', checks, { endAt })).toEqual([
      expect.objectContaining({ field: 'cron' }),
    ]);
    expect(problems('0 9 * * *', checks, { timezone: 'UTC' })).toEqual([]);
    expect(checks.size).toBe(3);
  });
});
