import {
  minimumIntervalSeconds,
  nextOccurrences,
  occurrencesBetween,
  type RecurrenceSpec,
} from '../../../src/recurrence';
import { OffsetTimeline } from '../../../src/recurrence/offset-timeline';

const at = (s: string) => new Date(s);
const instants = (spec: RecurrenceSpec, after: string, count: number) =>
  nextOccurrences(spec, at(after), count).map((o) => `${o.at.toISOString()} ${o.local}`);
const utcDays = (spec: RecurrenceSpec, after: string, count: number) =>
  nextOccurrences(spec, at(after), count).map((o) => o.local.slice(0, 10));

// Hand-computed: 2027-01-01 is a Friday; 2027-05-01 and 2027-05-15 Saturdays; 2027-08-15,
// 2027-01-31 and 2027-10-31 Sundays; 2027-07-31 a Saturday; 2027-04-30 a Friday.
describe('month-dependent day forms, matched in local time', () => {
  it.each<[string, string, number, string[]]>([
    ['0 9 L * *', '2027-01-01Z', 4, ['2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30']],
    ['0 9 L 2 *', '2027-03-01Z', 2, ['2028-02-29', '2029-02-28']],
    ['0 9 L-2 * *', '2027-01-01Z', 2, ['2027-01-29', '2027-02-26']],
    ['0 9 L-30 * *', '2027-01-01Z', 2, ['2027-01-01', '2027-03-01']],
    ['0 9 15W 5,8 *', '2027-01-01Z', 2, ['2027-05-14', '2027-08-16']],
    ['0 9 1W 5 *', '2027-01-01Z', 1, ['2027-05-03']],
    ['0 9 31W 4,5 *', '2027-01-01Z', 1, ['2027-05-31']],
    [
      '0 9 LW 1,4,7,10 *',
      '2027-01-01Z',
      4,
      ['2027-01-29', '2027-04-30', '2027-07-30', '2027-10-29'],
    ],
    ['0 9 * * 5L', '2027-01-01Z', 3, ['2027-01-29', '2027-02-26', '2027-03-26']],
    ['0 9 * * MON#2', '2027-01-01Z', 3, ['2027-01-11', '2027-02-08', '2027-03-08']],
    ['0 9 * * FRI#5', '2027-01-01Z', 2, ['2027-01-29', '2027-04-30']],
    ['0 9 * * 1#1,5L', '2027-01-01Z', 3, ['2027-01-04', '2027-01-29', '2027-02-01']],
    // Quartz's spelling: seconds first and ? for the day field that is not used.
    ['0 0 9 ? * MON#2', '2027-01-01Z', 1, ['2027-01-11']],
  ])('%s after %s', (cron, after, count, expected) => {
    expect(utcDays({ cron, timezone: 'UTC' }, after, count)).toEqual(expected);
  });

  it('day-of-month and day-of-week both restricted: a day matches when either does (Vixie)', () => {
    // The last day of the month OR any Monday; January 2027's Mondays are 4, 11, 18, 25.
    expect(utcDays({ cron: '0 9 L * MON', timezone: 'UTC' }, '2027-01-20Z', 3)).toEqual([
      '2027-01-25',
      '2027-01-31',
      '2027-02-01',
    ]);
    // The 13th OR the second Monday.
    expect(utcDays({ cron: '0 9 13 * MON#2', timezone: 'UTC' }, '2027-01-01Z', 3)).toEqual([
      '2027-01-11',
      '2027-01-13',
      '2027-02-08',
    ]);
  });

  it('a day form whose days come on a DST change goes through the DST policy', () => {
    // The second Sunday of March 2027 in New York is the spring-forward day: 02:30 never exists.
    const spring: RecurrenceSpec = { cron: '30 2 * 3 SUN#2', timezone: 'America/New_York' };
    // It always is, so with the default (skip) this schedule never fires at all.
    expect(instants(spring, '2027-01-01Z', 1)).toEqual([]);
    expect(
      instants(
        { ...spring, dstPolicy: { nonexistent: 'shift_forward', repeated: 'first' } },
        '2027-01-01Z',
        1,
      ),
    ).toEqual(['2027-03-14T07:00:00.000Z 2027-03-14T03:00:00-04:00']);
    // The first Sunday of November 2027 is the fall-back day: 01:30 happens twice.
    const fall: RecurrenceSpec = { cron: '30 1 * 11 SUN#1', timezone: 'America/New_York' };
    expect(instants(fall, '2027-01-01Z', 1)).toEqual([
      '2027-11-07T05:30:00.000Z 2027-11-07T01:30:00-04:00',
    ]);
    expect(
      instants({ ...fall, dstPolicy: { nonexistent: 'skip', repeated: 'both' } }, '2027-01-01Z', 2),
    ).toEqual([
      '2027-11-07T05:30:00.000Z 2027-11-07T01:30:00-04:00',
      '2027-11-07T06:30:00.000Z 2027-11-07T01:30:00-05:00',
    ]);
  });

  it('@daily is midnight on the local wall clock', () => {
    expect(instants({ cron: '@daily', timezone: 'Europe/Berlin' }, '2027-03-27T12:00Z', 2)).toEqual(
      [
        '2027-03-27T23:00:00.000Z 2027-03-28T00:00:00+01:00',
        '2027-03-28T22:00:00.000Z 2027-03-29T00:00:00+02:00',
      ],
    );
  });
});

describe('excluded local dates', () => {
  it('drop the runs a cron matched on those local dates (in its zone, not UTC)', () => {
    const spec: RecurrenceSpec = {
      cron: '30 0 * * *',
      timezone: 'Asia/Tokyo',
      excludeDates: ['2027-12-25', '2027-12-26'],
    };
    // 00:30 in Tokyo on the 27th is 15:30Z on the 26th: what counts is the local date.
    expect(instants(spec, '2027-12-23T16:00Z', 2)).toEqual([
      '2027-12-26T15:30:00.000Z 2027-12-27T00:30:00+09:00',
      '2027-12-27T15:30:00.000Z 2027-12-28T00:30:00+09:00',
    ]);
    expect(instants({ ...spec, excludeDates: [] }, '2027-12-23T16:00Z', 1)).toEqual([
      '2027-12-24T15:30:00.000Z 2027-12-25T00:30:00+09:00',
    ]);
  });

  it('drop an interval run whose local date is excluded, stepping over the day in one jump', () => {
    const spec: RecurrenceSpec = {
      every: 1,
      anchorAt: at('2027-01-01T00:00:00Z'),
      timezone: 'UTC',
      excludeDates: Array.from({ length: 300 }, (_, i) =>
        new Date(Date.UTC(2027, 0, 2 + i)).toISOString().slice(0, 10),
      ),
    };
    // Each candidate instant is looked up on the zone's timeline once: the steps are counted,
    // not timed. One a holiday (301 in all), where a step a second would be 25,920,000.
    const steps = jest.spyOn(OffsetTimeline.prototype, 'offsetAt');
    try {
      const [first] = nextOccurrences(spec, at('2027-01-01T23:59:59Z'), 1);
      expect(first.at.toISOString()).toBe('2027-10-29T00:00:00.000Z');
      expect(steps.mock.calls.length).toBeLessThanOrEqual(2 * 300);
    } finally {
      steps.mockRestore();
    }
  });

  it('a recurrence whose every date is excluded never fires (the horizon gives up)', () => {
    const spec: RecurrenceSpec = {
      cron: '0 9 29 2 *',
      timezone: 'UTC',
      excludeDates: [
        '2028-02-29',
        '2032-02-29',
        '2036-02-29',
        '2040-02-29',
        '2044-02-29',
        '2048-02-29',
        '2052-02-29',
        '2056-02-29',
      ],
    };
    expect(nextOccurrences(spec, at('2027-01-01Z'), 1)).toEqual([]);
  });

  it('a malformed date is refused', () => {
    expect(() =>
      nextOccurrences(
        { cron: '0 9 * * *', timezone: 'UTC', excludeDates: ['2027-02-30'] },
        at('2027-01-01Z'),
        1,
      ),
    ).toThrow(/2027-02-30/);
  });
});

describe('interval schedules', () => {
  const ninety: RecurrenceSpec = {
    every: 5400,
    anchorAt: at('2027-03-14T05:00:00Z'),
    timezone: 'America/New_York',
  };

  it('run every interval of absolute time from the anchor; DST only changes the local reading', () => {
    expect(instants(ninety, '2027-03-14T00:00Z', 3)).toEqual([
      '2027-03-14T05:00:00.000Z 2027-03-14T00:00:00-05:00',
      '2027-03-14T06:30:00.000Z 2027-03-14T01:30:00-05:00',
      '2027-03-14T08:00:00.000Z 2027-03-14T04:00:00-04:00',
    ]);
  });

  it('the anchor is the first run; later windows land on the same grid', () => {
    expect(instants(ninety, '2027-03-15T05:00:00Z', 1)).toEqual([
      '2027-03-15T06:30:00.000Z 2027-03-15T02:30:00-04:00',
    ]);
    const window = occurrencesBetween(ninety, at('2027-03-14T04:00Z'), at('2027-03-14T09:30Z'), 10);
    expect(window.occurrences.map((o) => o.at.toISOString())).toEqual([
      '2027-03-14T05:00:00.000Z',
      '2027-03-14T06:30:00.000Z',
      '2027-03-14T08:00:00.000Z',
      '2027-03-14T09:30:00.000Z',
    ]);
    expect(minimumIntervalSeconds(ninety, at('2027-03-14Z'))).toBe(5400);
  });

  it('respect startAt and endAt', () => {
    const bounded = { ...ninety, startAt: at('2027-03-14T07:00Z'), endAt: at('2027-03-14T09:30Z') };
    expect(
      nextOccurrences(bounded, at('2027-03-14T00:00Z'), 5).map((o) => o.at.toISOString()),
    ).toEqual(['2027-03-14T08:00:00.000Z', '2027-03-14T09:30:00.000Z']);
  });

  it('refuse what is not an interval', () => {
    expect(() => nextOccurrences({ ...ninety, every: 0 }, at('2027-01-01Z'), 1)).toThrow(/every/);
    expect(() => nextOccurrences({ ...ninety, every: 1.5 }, at('2027-01-01Z'), 1)).toThrow(/every/);
    expect(() => nextOccurrences({ ...ninety, cron: '* * * * *' }, at('2027-01-01Z'), 1)).toThrow(
      /exactly one of cron and every/,
    );
    expect(() =>
      nextOccurrences(
        { ...ninety, dstPolicy: { nonexistent: 'skip', repeated: 'first' } },
        at('2027-01-01Z'),
        1,
      ),
    ).toThrow(/dstPolicy/);
  });
});
