import { ValidationError } from '../../../src/common';
import type { FiringChecks } from '../../../src/schedules/schedule-definition';
import { buildDefinition } from '../../../src/schedules/schedule-definition';

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
    const checks: FiringChecks = new Map();
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 0 30 2 *', checks)).toEqual(problems('0 0 30 2 *'));
    expect(problems('0 0 30 2 *', checks)).toHaveLength(1);
    expect(problems('* * * * * *', checks, { dstPolicy: { repeated: 'both' } })).toEqual([]);
    expect(checks.size).toBe(3);
  });

  it('tells recurrences apart by timezone, DST policy and bounds', () => {
    const checks: FiringChecks = new Map();
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
