import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  InvalidCronError,
  InvalidTimezoneError,
  isValidTimezone,
  minimumIntervalSeconds,
  nextOccurrence,
  nextOccurrences,
  occurrencesBetween,
  toLocalIso,
  type DstPolicy,
  type RecurrenceSpec,
} from '../../../src/recurrence';
import { CronMatcher } from '../../../src/recurrence/cron-matcher';
import { intlLocalIso } from './intl-oracle';

const iso = (d: Date) => d.toISOString();
const at = (s: string) => new Date(s);
const HOURLY_UTC: RecurrenceSpec = { cron: '0 * * * *', timezone: 'UTC' };

describe('nextOccurrences: bounds and exclusivity', () => {
  const cases: {
    name: string;
    spec: RecurrenceSpec;
    after: string;
    count: number;
    expected: string[];
  }[] = [
    {
      name: '`after` exactly on an occurrence excludes it',
      spec: HOURLY_UTC,
      after: '2027-01-01T05:00:00.000Z',
      count: 2,
      expected: ['2027-01-01T06:00:00.000Z', '2027-01-01T07:00:00.000Z'],
    },
    {
      name: '`after` one millisecond before an occurrence includes it',
      spec: HOURLY_UTC,
      after: '2027-01-01T04:59:59.999Z',
      count: 1,
      expected: ['2027-01-01T05:00:00.000Z'],
    },
    {
      name: '`after` one millisecond past an occurrence excludes it',
      spec: HOURLY_UTC,
      after: '2027-01-01T05:00:00.001Z',
      count: 1,
      expected: ['2027-01-01T06:00:00.000Z'],
    },
    {
      name: 'startAt is inclusive and later than `after`',
      spec: { ...HOURLY_UTC, startAt: at('2027-01-01T05:00:00Z') },
      after: '2027-01-01T00:00:00Z',
      count: 2,
      expected: ['2027-01-01T05:00:00.000Z', '2027-01-01T06:00:00.000Z'],
    },
    {
      name: '`after` wins when it is later than startAt',
      spec: { ...HOURLY_UTC, startAt: at('2027-01-01T05:00:00Z') },
      after: '2027-01-01T07:00:00Z',
      count: 1,
      expected: ['2027-01-01T08:00:00.000Z'],
    },
    {
      name: 'endAt is inclusive and stops the series',
      spec: {
        ...HOURLY_UTC,
        startAt: at('2027-01-01T05:00:00Z'),
        endAt: at('2027-01-01T08:00:00Z'),
      },
      after: '2027-01-01T00:00:00Z',
      count: 10,
      expected: [
        '2027-01-01T05:00:00.000Z',
        '2027-01-01T06:00:00.000Z',
        '2027-01-01T07:00:00.000Z',
        '2027-01-01T08:00:00.000Z',
      ],
    },
    {
      name: 'null startAt/endAt mean unbounded',
      spec: { ...HOURLY_UTC, startAt: null, endAt: null },
      after: '2027-01-01T00:00:00Z',
      count: 1,
      expected: ['2027-01-01T01:00:00.000Z'],
    },
    {
      name: 'endAt before startAt yields nothing',
      spec: { ...HOURLY_UTC, startAt: at('2027-02-01T00:00Z'), endAt: at('2027-01-01T00:00Z') },
      after: '2026-01-01T00:00:00Z',
      count: 5,
      expected: [],
    },
    {
      name: '`after` past endAt yields nothing',
      spec: { ...HOURLY_UTC, endAt: at('2027-01-01T00:00Z') },
      after: '2027-01-01T00:00:00Z',
      count: 5,
      expected: [],
    },
    {
      name: 'count 0 yields nothing',
      spec: HOURLY_UTC,
      after: '2027-01-01T00:00:00Z',
      count: 0,
      expected: [],
    },
    {
      name: 'never-matching 0 0 30 2 *',
      spec: { cron: '0 0 30 2 *', timezone: 'Europe/London' },
      after: '2027-01-01T00:00:00Z',
      count: 3,
      expected: [],
    },
    {
      name: 'never-matching 0 0 31 4,6,9,11 *',
      spec: { cron: '0 0 31 4,6,9,11 *', timezone: 'America/New_York' },
      after: '2027-01-01T00:00:00Z',
      count: 3,
      expected: [],
    },
  ];

  it.each(cases)('$name', ({ spec, after, count, expected }) => {
    expect(nextOccurrences(spec, at(after), count).map((o) => iso(o.at))).toEqual(expected);
  });

  it.each([
    ['the largest Date', new Date(8.64e15), []],
    [
      'the smallest Date (clamped to year 0001)',
      new Date(-8.64e15),
      ['0001-01-01T00:00:00.000Z', '0002-01-01T00:00:00.000Z'],
    ],
    ['the last year searched is 9999', at('9998-06-01T00:00:00Z'), ['9999-01-01T00:00:00.000Z']],
  ])('stays within years 0001-9999: after %s', (_name, after, expected) => {
    const spec: RecurrenceSpec = { cron: '0 0 1 1 *', timezone: 'UTC' };
    expect(nextOccurrences(spec, after, 2).map((o) => iso(o.at))).toEqual(expected);
  });

  it('nextOccurrence returns the first one, or null', () => {
    expect(nextOccurrence(HOURLY_UTC, at('2027-01-01T05:30:00Z'))).toEqual({
      at: at('2027-01-01T06:00:00Z'),
      local: '2027-01-01T06:00:00+00:00',
    });
    expect(nextOccurrence({ cron: '0 0 30 2 *', timezone: 'UTC' }, at('2027-01-01Z'))).toBeNull();
    expect(
      nextOccurrence({ ...HOURLY_UTC, endAt: at('2027-01-01T05:00:00Z') }, at('2027-01-01T05:00Z')),
    ).toBeNull();
  });
});

describe('nextOccurrences: ordering invariants over long runs', () => {
  // Each run starts shortly before a transition in its zone and is long enough to cross it.
  const runs: [RecurrenceSpec, string][] = [
    [
      { cron: '*/7 * * * *', timezone: 'America/New_York', dstPolicy: shift('both') },
      '2027-11-06T00:00:00Z',
    ],
    [
      { cron: '30 1,2 * * *', timezone: 'Europe/London', dstPolicy: shift('both') },
      '2027-03-20T00:00:00Z',
    ],
    [
      { cron: '*/10 1-3 * * *', timezone: 'Australia/Lord_Howe', dstPolicy: shift('last') },
      '2027-03-30T00:00:00Z',
    ],
    [
      { cron: '0 */3 * * *', timezone: 'Pacific/Apia', dstPolicy: shift('both') },
      '2011-12-28T00:00:00Z',
    ],
    [{ cron: '0 0 1 * *', timezone: 'Asia/Kolkata' }, '2011-01-01T00:00:00Z'],
    [
      // Chatham 2027-04-04 03:45 +13:45 -> 02:45 +12:45, at 2027-04-03T14:00Z.
      { cron: '*/30 * * * * *', timezone: 'Pacific/Chatham', dstPolicy: shift('first') },
      '2027-04-03T12:00:00Z',
    ],
  ];

  const named = runs.map(([spec, from]) => ({
    name: `${spec.timezone} "${spec.cron}" from ${from}`,
    spec,
    from,
  }));

  it.each(named)(
    '$name: strictly ascending, all after `after`, Intl-consistent',
    ({ spec, from }) => {
      const after = at(from);
      const result = nextOccurrences(spec, after, 400);
      expect(result).toHaveLength(400);
      let previous = after.getTime();
      for (const o of result) {
        expect(o.at.getTime()).toBeGreaterThan(previous);
        previous = o.at.getTime();
      }
      for (const o of result.filter((_, i) => i % 5 === 0)) {
        expect(o.local).toBe(intlLocalIso(o.at, spec.timezone));
      }
    },
  );

  it('paging with nextOccurrences(after = last result) reproduces one long call', () => {
    const spec: RecurrenceSpec = {
      cron: '*/20 0-3 * * *',
      timezone: 'America/New_York',
      dstPolicy: shift('both'),
    };
    const start = at('2027-11-06T00:00:00Z');
    const whole = nextOccurrences(spec, start, 60).map((o) => iso(o.at));
    const paged: string[] = [];
    let cursor = start;
    while (paged.length < 60) {
      const page = nextOccurrences(spec, cursor, 7);
      paged.push(...page.map((o) => iso(o.at)));
      cursor = page[page.length - 1].at;
    }
    expect(paged.slice(0, 60)).toEqual(whole);
  });
});

function shift(repeated: DstPolicy['repeated']): DstPolicy {
  return { nonexistent: 'shift_forward', repeated };
}

describe('occurrencesBetween', () => {
  const QUARTER: RecurrenceSpec = { cron: '*/15 * * * *', timezone: 'UTC' };
  const cases: {
    name: string;
    spec: RecurrenceSpec;
    from: string;
    to: string;
    limit: number;
    expected: string[];
    truncated: boolean;
  }[] = [
    {
      name: 'from exclusive, to inclusive',
      spec: QUARTER,
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 10,
      expected: ['00:15', '00:30', '00:45', '01:00'],
      truncated: false,
    },
    {
      name: 'limit exactly the number found is not truncated',
      spec: QUARTER,
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 4,
      expected: ['00:15', '00:30', '00:45', '01:00'],
      truncated: false,
    },
    {
      name: 'more than limit is truncated (earliest kept)',
      spec: QUARTER,
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 2,
      expected: ['00:15', '00:30'],
      truncated: true,
    },
    {
      name: 'limit 0 only reports whether anything was missed',
      spec: QUARTER,
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 0,
      expected: [],
      truncated: true,
    },
    {
      name: 'empty window',
      spec: QUARTER,
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T00:10:00Z',
      limit: 5,
      expected: [],
      truncated: false,
    },
    {
      name: 'from after to',
      spec: QUARTER,
      from: '2027-01-01T02:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 5,
      expected: [],
      truncated: false,
    },
    {
      name: 'clipped by startAt and endAt',
      spec: { ...QUARTER, startAt: at('2027-01-01T00:30:00Z'), endAt: at('2027-01-01T00:45:00Z') },
      from: '2027-01-01T00:00:00Z',
      to: '2027-01-01T01:00:00Z',
      limit: 10,
      expected: ['00:30', '00:45'],
      truncated: false,
    },
    {
      name: 'year-long per-second window is cut at the limit quickly',
      spec: { cron: '* * * * * *', timezone: 'America/New_York' },
      from: '2027-01-01T00:00:00Z',
      to: '2028-01-01T00:00:00Z',
      limit: 3,
      expected: ['00:00', '00:00', '00:00'],
      truncated: true,
    },
  ];

  it.each(cases)('$name', ({ spec, from, to, limit, expected, truncated }) => {
    const result = occurrencesBetween(spec, at(from), at(to), limit);
    expect(result.occurrences.map((o) => iso(o.at).slice(11, 16))).toEqual(expected);
    expect(result.truncated).toBe(truncated);
  });

  it('catches up across a fall-back with both (UTC order, 2 x 01:30)', () => {
    // America/New_York 2027-11-07: 01:30 EDT = 05:30Z, 01:30 EST = 06:30Z.
    const result = occurrencesBetween(
      { cron: '30 1 * * *', timezone: 'America/New_York', dstPolicy: shift('both') },
      at('2027-11-07T00:00:00Z'),
      at('2027-11-08T00:00:00Z'),
      10,
    );
    expect(result.occurrences.map((o) => [iso(o.at), o.local])).toEqual([
      ['2027-11-07T05:30:00.000Z', '2027-11-07T01:30:00-04:00'],
      ['2027-11-07T06:30:00.000Z', '2027-11-07T01:30:00-05:00'],
    ]);
  });
});

describe('minimumIntervalSeconds', () => {
  const from = at('2027-11-06T00:00:00Z');
  const cases: [string, RecurrenceSpec, number | null][] = [
    ['every 15 minutes', { cron: '*/15 * * * *', timezone: 'UTC' }, 900],
    ['every 10 seconds', { cron: '*/10 * * * * *', timezone: 'UTC' }, 10],
    ['twice a day', { cron: '0 9,17 * * *', timezone: 'Europe/London' }, 8 * 3600],
    ['daily', { cron: '0 9 * * *', timezone: 'Asia/Kolkata' }, 86400],
    // 23:59 then 00:00 the next day: only visible across midnight.
    ['across midnight', { cron: '0,59 0,23 * * *', timezone: 'UTC' }, 60],
    // 01:30 EDT and 01:30 EST on 2027-11-07 are an hour apart.
    [
      'daily but twice on fall-back day with both',
      { cron: '30 1 * * *', timezone: 'America/New_York', dstPolicy: shift('both') },
      3600,
    ],
    // Lord Howe 2027-10-03: 02:15 shifted to 02:30 (+11:00); 02:35 is five minutes later.
    [
      'shift_forward can bring runs closer',
      { cron: '15,35 2 * * *', timezone: 'Australia/Lord_Howe', dstPolicy: shift('first') },
      300,
    ],
    ['never runs', { cron: '0 0 30 2 *', timezone: 'UTC' }, null],
    ['runs once', { cron: '0 0 * * *', timezone: 'UTC', endAt: at('2027-11-07T00:00Z') }, null],
  ];

  it.each(cases)('%s', (_name, spec, expected) => {
    const fromForCase = spec.timezone === 'Australia/Lord_Howe' ? at('2027-10-01T00:00Z') : from;
    expect(minimumIntervalSeconds(spec, fromForCase, 200)).toBe(expected);
  });
});

describe('input validation', () => {
  it('throws InvalidCronError for a bad cron', () => {
    expect(() =>
      nextOccurrences({ cron: '61 * * * *', timezone: 'UTC' }, at('2027-01-01Z'), 1),
    ).toThrow(InvalidCronError);
  });

  it.each(['Mars/Olympus', '+02:00', 'local', ''])(
    'throws InvalidTimezoneError for timezone %j',
    (timezone) => {
      const call = () => nextOccurrences({ cron: '0 * * * *', timezone }, at('2027-01-01Z'), 1);
      expect(call).toThrow(InvalidTimezoneError);
      expect(call).toThrow(/Invalid timezone/);
    },
  );

  it('validates the spec even when the window is empty', () => {
    expect(() =>
      occurrencesBetween(
        { cron: 'nope', timezone: 'UTC' },
        at('2027-01-02Z'),
        at('2027-01-01Z'),
        1,
      ),
    ).toThrow(InvalidCronError);
  });

  it.each([
    ['NaN date', () => nextOccurrences(HOURLY_UTC, new Date(NaN), 1), /after must be a valid Date/],
    ['negative count', () => nextOccurrences(HOURLY_UTC, at('2027-01-01Z'), -1), /count/],
    ['fractional count', () => nextOccurrences(HOURLY_UTC, at('2027-01-01Z'), 1.5), /count/],
    [
      'bad limit',
      () => occurrencesBetween(HOURLY_UTC, at('2027-01-01Z'), at('2027-01-02Z'), NaN),
      /limit/,
    ],
    [
      'bad startAt',
      () => nextOccurrences({ ...HOURLY_UTC, startAt: new Date('x') }, at('2027-01-01Z'), 1),
      /startAt/,
    ],
    [
      'unknown dst policy',
      () =>
        nextOccurrences(
          { ...HOURLY_UTC, dstPolicy: { nonexistent: 'later', repeated: 'first' } as never },
          at('2027-01-01Z'),
          1,
        ),
      /dstPolicy/,
    ],
  ])('rejects %s with RangeError', (_name, call, message) => {
    expect(call).toThrow(RangeError);
    expect(call).toThrow(message);
  });
});

describe('isValidTimezone', () => {
  it.each([
    'UTC',
    'Etc/UTC',
    'Etc/GMT+5',
    'Etc/GMT-14',
    'GMT',
    'America/New_York',
    'Europe/London',
    'Australia/Lord_Howe',
    'Asia/Kolkata',
    'Asia/Calcutta',
    'Pacific/Apia',
    'America/Argentina/Buenos_Aires',
  ])('accepts %j', (name) => {
    expect(isValidTimezone(name)).toBe(true);
  });

  it.each([
    '',
    ' ',
    'local',
    'Local',
    'system',
    '+02:00',
    '-05:00',
    '+0200',
    'UTC+2',
    'UTC-05:00',
    'GMT+2',
    'Mars/Olympus',
    'America/New_York ',
    ' Europe/London',
    'Not a zone',
    'America/',
  ])('rejects %j', (name) => {
    expect(isValidTimezone(name)).toBe(false);
  });

  it.each([null, undefined, 42, {}])('rejects non-string %p', (name) => {
    expect(isValidTimezone(name as unknown as string)).toBe(false);
  });
});

describe('toLocalIso', () => {
  it.each([
    ['2027-11-07T05:30:00Z', 'America/New_York', '2027-11-07T01:30:00-04:00'],
    ['2027-11-07T06:30:00Z', 'America/New_York', '2027-11-07T01:30:00-05:00'],
    ['2027-07-01T00:00:00Z', 'UTC', '2027-07-01T00:00:00+00:00'],
    ['2027-07-01T00:00:00Z', 'Europe/London', '2027-07-01T01:00:00+01:00'],
    ['2027-07-01T00:00:00Z', 'Asia/Kolkata', '2027-07-01T05:30:00+05:30'],
    ['2027-10-02T15:30:00Z', 'Australia/Lord_Howe', '2027-10-03T02:30:00+11:00'],
    ['2027-10-02T15:29:59Z', 'Australia/Lord_Howe', '2027-10-03T01:59:59+10:30'],
    ['2011-12-30T10:00:00Z', 'Pacific/Apia', '2011-12-31T00:00:00+14:00'],
    ['2011-12-30T09:59:59Z', 'Pacific/Apia', '2011-12-29T23:59:59-10:00'],
    ['2027-01-01T00:00:00.999Z', 'UTC', '2027-01-01T00:00:00+00:00'],
  ])('%s in %s is %s', (instant, zone, expected) => {
    expect(toLocalIso(at(instant), zone)).toBe(expected);
  });

  it('agrees with Intl across a year of hourly instants in tricky zones', () => {
    const zones = ['America/New_York', 'Australia/Lord_Howe', 'Pacific/Chatham', 'Asia/Kathmandu'];
    for (const zone of zones) {
      for (
        let t = Date.parse('2027-01-01T00:17:00Z');
        t < Date.parse('2028-01-01Z');
        t += 29 * 3_600_000
      ) {
        expect(toLocalIso(new Date(t), zone)).toBe(intlLocalIso(new Date(t), zone));
      }
    }
  });

  it('rejects invalid input', () => {
    expect(() => toLocalIso(at('2027-01-01Z'), 'local')).toThrow(InvalidTimezoneError);
    expect(() => toLocalIso(new Date(NaN), 'UTC')).toThrow(RangeError);
  });
});

describe('engine hygiene', () => {
  it('is bounded: pathological schedules give up at the horizon, a day at a time', () => {
    // The matcher's day checks are counted, not timed: a schedule that never or rarely fires
    // checks each day of its own months once up to the search horizon (30 years), and skips
    // the other months whole.
    const days = jest.spyOn(CronMatcher.prototype, 'dayMatches');
    const specs: RecurrenceSpec[] = [
      { cron: '0 0 30 2 *', timezone: 'America/New_York' },
      { cron: '* * 31 2 *', timezone: 'Australia/Lord_Howe' },
      { cron: '0 0 31 4,6,9,11 *', timezone: 'UTC' },
      // Feb 29 on a Sunday: next after 2032 is 2060, near the end of the search horizon.
      { cron: '0 0 29 2 */7', timezone: 'Europe/London' },
    ];
    try {
      const looked = specs.map((spec) => {
        days.mockClear();
        nextOccurrences(spec, at('2027-01-01Z'), 5);
        return days.mock.calls.length;
      });
      // 848-3,600 a schedule; the horizon holds about 11,000 days, so checking every day of
      // every month is over the bound.
      for (const n of looked) expect(n).toBeLessThan(5_000);
      expect(
        nextOccurrences({ cron: '0 0 30 2 *', timezone: 'UTC' }, at('2027-01-01Z'), 5),
      ).toEqual([]);
    } finally {
      days.mockRestore();
    }
  });

  it('never reads the clock (time is always passed in)', () => {
    const dir = join(__dirname, '../../../src/recurrence');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
      const source = readFileSync(join(dir, file), 'utf8');
      expect({ file, clock: /Date\.now\(|new Date\(\)|performance\.now\(/.test(source) }).toEqual({
        file,
        clock: false,
      });
    }
  });

  it('is deterministic', () => {
    const spec: RecurrenceSpec = {
      cron: '*/15 1-3 * * *',
      timezone: 'America/New_York',
      dstPolicy: shift('both'),
    };
    const a = nextOccurrences(spec, at('2027-11-06T00:00Z'), 50);
    const b = nextOccurrences(spec, at('2027-11-06T00:00Z'), 50);
    expect(b).toEqual(a);
  });
});
