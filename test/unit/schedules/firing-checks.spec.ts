import { ValidationError } from '../../../src/common';
import {
  buildDefinition,
  FiringChecks,
  nextDueAfter,
} from '../../../src/schedules/schedule-definition';

describe('buildDefinition with shared firing checks (a batch, and creates over time)', () => {
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
    const checks = new FiringChecks();
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 9 * * *', checks)).toEqual([]);
    expect(problems('0 0 30 2 *', checks)).toEqual(problems('0 0 30 2 *'));
    expect(problems('0 0 30 2 *', checks)).toHaveLength(1);
    expect(problems('* * * * * *', checks, { dstPolicy: { repeated: 'both' } })).toEqual([]);
    expect(checks.size).toBe(3);
  });

  it('knows the first due instant of the recurrences it checked, until that instant', () => {
    const checks = new FiringChecks();
    const definition = buildDefinition({ ...base, cron: '0 9 * * *' }, now, checks);
    expect(nextDueAfter(definition, now, checks)).toEqual(nextDueAfter(definition, now));
    expect(nextDueAfter(definition, now, checks)).toEqual(new Date('2027-03-02T08:00:00Z'));
    const later = new Date('2027-03-02T09:00:00Z');
    expect(nextDueAfter(definition, later, checks)).toEqual(new Date('2027-03-03T08:00:00Z'));
  });

  it('tells recurrences apart by timezone, DST policy and bounds', () => {
    const checks = new FiringChecks();
    const endAt = new Date('2027-03-01T12:30:00Z');
    expect(problems('0 9 * * *', checks)).toEqual([]);
    // Same cron, but bounds under which it never fires: its own check, its own answer.
    expect(problems('0 9 * * *', checks, { endAt })).toEqual([
      expect.objectContaining({ field: 'cron' }),
    ]);
    expect(problems('0 9 * * *', checks, { timezone: 'UTC' })).toEqual([]);
    expect(checks.size).toBe(3);
  });

  it('keeps a survey across instants until its first instant, then takes it again', () => {
    const checks = new FiringChecks();
    const definition = buildDefinition({ ...base, cron: '0 9 * * *' }, now, checks);
    const first = checks.surveyAt(definition, now)!;
    expect(first.first).toEqual(new Date('2027-03-02T08:00:00Z'));
    // An hour later no instant of the recurrence has passed: the same walk still holds.
    expect(checks.surveyAt(definition, new Date('2027-03-01T13:00:00Z'))).toBe(first);
    expect(nextDueAfter(definition, new Date('2027-03-02T07:59:59Z'), checks)).toEqual(first.first);
    // At its first instant the walk is stale (nothing strictly after it is known): a new one.
    const at = new Date('2027-03-02T08:00:00Z');
    const again = checks.surveyAt(definition, at)!;
    expect(again).not.toBe(first);
    expect(again.first).toEqual(new Date('2027-03-03T08:00:00Z'));
    expect(checks.size).toBe(1);
  });

  it('answers later instants as a fresh check would: a recurrence that has stopped firing', () => {
    const checks = new FiringChecks();
    // It fires once more, on 2 March, and never after endAt: fine now, refused on 3 March.
    const endAt = new Date('2027-03-02T12:00:00Z');
    expect(problems('0 9 * * *', checks, { endAt })).toEqual([]);
    const later = new Date('2027-03-03T00:00:00Z');
    const build = () => buildDefinition({ ...base, cron: '0 9 * * *', endAt }, later, checks);
    expect(build).toThrow(ValidationError);
    expect(() => buildDefinition({ ...base, cron: '0 9 * * *', endAt }, later)).toThrow(
      ValidationError,
    );
  });

  it('judges the horizon at the instant of each create, not of the survey', () => {
    const checks = new FiringChecks();
    // Daily, but only from 1,831 days on: past the 1,830-day horizon now, within it two days later.
    const startAt = new Date(now.getTime() + 1_831 * 86_400_000);
    expect(problems('0 9 * * *', checks, { startAt })).toEqual([
      expect.objectContaining({ field: 'cron', message: expect.stringContaining('first run') }),
    ]);
    const later = new Date(now.getTime() + 2 * 86_400_000);
    const build = (checked?: FiringChecks) =>
      buildDefinition({ ...base, cron: '0 9 * * *', startAt }, later, checked).timing;
    expect(build(checks)).toEqual(build());
    expect(checks.size).toBe(1);
  });

  it('keeps at most its capacity of recurrences, the oldest out first', () => {
    const checks = new FiringChecks(2);
    for (const cron of ['0 9 * * *', '0 10 * * *', '0 11 * * *']) problems(cron, checks);
    expect(checks.size).toBe(2);
  });
});
