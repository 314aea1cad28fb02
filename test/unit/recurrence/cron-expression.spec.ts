import { InvalidCronError, parseCron } from '../../../src/recurrence';

const range = (from: number, to: number, step = 1) => {
  const out: number[] = [];
  for (let v = from; v <= to; v += step) out.push(v);
  return out;
};
const ALL_DOM = range(1, 31);
const ALL_DOW = range(0, 6);

describe('parseCron: accepted expressions', () => {
  type Expect = Partial<{
    seconds: number[];
    minutes: number[];
    hours: number[];
    daysOfMonth: number[];
    months: number[];
    daysOfWeek: number[];
    hasSeconds: boolean;
    dayOfMonthRestricted: boolean;
    dayOfWeekRestricted: boolean;
  }>;
  const cases: [string, Expect][] = [
    [
      '* * * * *',
      {
        hasSeconds: false,
        seconds: [0],
        minutes: range(0, 59),
        hours: range(0, 23),
        daysOfMonth: ALL_DOM,
        months: range(1, 12),
        daysOfWeek: ALL_DOW,
        dayOfMonthRestricted: false,
        dayOfWeekRestricted: false,
      },
    ],
    ['*/15 * * * * *', { hasSeconds: true, seconds: [0, 15, 30, 45], minutes: range(0, 59) }],
    ['0 30 9 * * *', { hasSeconds: true, seconds: [0], minutes: [30], hours: [9] }],
    ['5 4 * * *', { minutes: [5], hours: [4] }],
    ['0-10/5 * * * *', { minutes: [0, 5, 10] }],
    ['5/20 * * * *', { minutes: [5, 25, 45] }],
    ['1,2,3,2,1 * * * *', { minutes: [1, 2, 3] }],
    ['0 9-17 * * *', { hours: range(9, 17) }],
    ['0 */6 * * *', { hours: [0, 6, 12, 18] }],
    ['0 0 1,15 * *', { daysOfMonth: [1, 15], dayOfMonthRestricted: true }],
    ['0 0 * JAN-MAR *', { months: [1, 2, 3] }],
    ['0 0 * jan,Jun,DEC *', { months: [1, 6, 12] }],
    ['0 0 * */3 *', { months: [1, 4, 7, 10] }],
    ['0 0 * FEB-DEC/2 *', { months: [2, 4, 6, 8, 10, 12] }],
    ['0 0 * * MON-FRI', { daysOfWeek: [1, 2, 3, 4, 5], dayOfWeekRestricted: true }],
    ['0 0 * * sun,Sat', { daysOfWeek: [0, 6] }],
    ['0 0 * * 7', { daysOfWeek: [0] }],
    ['0 0 * * 0,7', { daysOfWeek: [0] }],
    ['0 0 * * 5-7', { daysOfWeek: [0, 5, 6] }],
    ['0 0 * * MON-SUN', { daysOfWeek: ALL_DOW }],
    ['0 0 * * */2', { daysOfWeek: [0, 2, 4, 6], dayOfWeekRestricted: false }],
    ['0 0 13 * FRI', { daysOfMonth: [13], daysOfWeek: [5] }],
    // Vixie: a day field starting with '*' counts as unrestricted even with a step.
    ['0 0 */2 * MON', { dayOfMonthRestricted: false, dayOfWeekRestricted: true }],
    ['0 0 1-31 * MON', { dayOfMonthRestricted: true, dayOfWeekRestricted: true }],
    ['  0   0\t* *  *  ', { minutes: [0], hours: [0] }],
    ['*/60 * * * *', { minutes: [0] }],
    ['00 09 * * *', { minutes: [0], hours: [9] }],
  ];

  it.each(cases)('%j', (expression, expected) => {
    expect(parseCron(expression)).toMatchObject(expected);
  });

  it.each([
    ['@yearly', '0 0 1 1 *'],
    ['@annually', '0 0 1 1 *'],
    ['@monthly', '0 0 1 * *'],
    ['@weekly', '0 0 * * 0'],
    ['@daily', '0 0 * * *'],
    ['@midnight', '0 0 * * *'],
    ['@HOURLY', '0 * * * *'],
  ])('the macro %s stands for %s', (macro, fields) => {
    const { source, ...parsed } = parseCron(macro);
    const { source: expandedSource, ...expanded } = parseCron(fields);
    expect(source).toBe(macro);
    expect(expandedSource).toBe(fields);
    expect(parsed).toEqual(expanded);
  });

  it.each<[string, object]>([
    ['0 0 L * *', { monthDays: { fromLast: [0], nearestWeekday: [], lastWeekday: false } }],
    [
      '0 0 L-3,1 * *',
      { daysOfMonth: [1], monthDays: { fromLast: [3], nearestWeekday: [], lastWeekday: false } },
    ],
    [
      '0 0 15W * *',
      { daysOfMonth: [], monthDays: { fromLast: [], nearestWeekday: [15], lastWeekday: false } },
    ],
    ['0 0 lw * *', { monthDays: { fromLast: [], nearestWeekday: [], lastWeekday: true } }],
    ['0 0 * * 5L', { daysOfWeek: [], weekdaysOfMonth: { nth: [], last: [5] } }],
    ['0 0 * * FRIL,SUN', { daysOfWeek: [0], weekdaysOfMonth: { nth: [], last: [5] } }],
    ['0 0 * * MON#2', { weekdaysOfMonth: { nth: [{ weekday: 1, nth: 2 }], last: [] } }],
    ['0 0 * * 7#1', { weekdaysOfMonth: { nth: [{ weekday: 0, nth: 1 }], last: [] } }],
  ])('month-dependent day forms: %s', (expression, expected) => {
    const parsed = parseCron(expression);
    expect(parsed).toMatchObject(expected);
  });

  it('a day field with L, W or # is restricted; a lone ? is not', () => {
    expect(parseCron('0 0 L * MON')).toMatchObject({
      dayOfMonthRestricted: true,
      dayOfWeekRestricted: true,
    });
    expect(parseCron('0 0 12 ? * MON#2')).toMatchObject({
      hasSeconds: true,
      dayOfMonthRestricted: false,
      dayOfWeekRestricted: true,
      daysOfMonth: ALL_DOM,
    });
  });

  it('keeps the trimmed source text', () => {
    expect(parseCron('  0 0 * * * ').source).toBe('0 0 * * *');
  });
});

describe('parseCron: rejected expressions', () => {
  const cases: [string, RegExp][] = [
    ['', /empty/],
    ['   ', /empty/],
    ['* * * *', /5 fields.*got 4/],
    ['* * * * * * *', /got 7/],
    ['0 0 12 * * ? 2027', /got 7/],
    ['60 * * * *', /60 is out of range for minute \(0-59\)/],
    ['60 * * * * *', /out of range for second/],
    ['* 24 * * *', /out of range for hour/],
    ['* * 0 * *', /out of range for day-of-month \(1-31\)/],
    ['* * 32 * *', /out of range for day-of-month/],
    ['* * * 0 *', /out of range for month \(1-12\)/],
    ['* * * 13 *', /out of range for month/],
    ['* * * * 8', /out of range for day-of-week \(0-7\)/],
    ['*/0 * * * *', /Step must be at least 1/],
    ['0 */0 * * *', /Step must be at least 1/],
    ['*/61 * * * *', /Step 61 is larger than the minute range/],
    ['0 */25 * * *', /Step 25 is larger than the hour range/],
    ['*/ * * * *', /Invalid step ""/],
    ['*/x * * * *', /Invalid step "x"/],
    ['*/-1 * * * *', /Invalid step/],
    ['1/2/3 * * * *', /Too many '\/'/],
    ['5-1 * * * *', /runs backwards/],
    ['0 0 * * FRI-MON', /runs backwards/],
    ['1-2-3 * * * *', /Invalid range/],
    ['-1 * * * *', /Missing value/],
    ['* * * * MON-', /Missing value/],
    ['1,,2 * * * *', /Empty list element/],
    [',1 * * * *', /Empty list element/],
    ['a * * * *', /Invalid value "a" in minute field/],
    ['1.5 * * * *', /Invalid value "1.5"/],
    ['+1 * * * *', /Invalid value "\+1"/],
    ['* * * FOO *', /Invalid value "FOO" in month field/],
    ['* * * * FOO', /Invalid value "FOO" in day-of-week field/],
    ['* * * * JAN', /Invalid value "JAN" in day-of-week field/],
    ['* * * MON *', /Invalid value "MON" in month field/],
    ['* * MON * *', /Invalid value "MON" in day-of-month field/],
    ['* * * * MONDAY', /Invalid value "MONDAY"/],
    ['? 0 * * MON', /'\?' is only accepted alone in a day field/],
    ['0 0 1,? * MON', /'\?' is only accepted alone/],
    ['0 0 L-0 * *', /L-n takes n from 1 to 30/],
    ['0 0 L-31 * *', /L-n takes n from 1 to 30/],
    ['0 0 32W * *', /nW takes a day from 1 to 31/],
    ['0 0 0W * *', /nW takes a day from 1 to 31/],
    ['0 0 5L * *', /Invalid day-of-month form "5L"/],
    ['0 0 W * *', /Invalid day-of-month form "W"/],
    ['0 0 L-2/3 * *', /Invalid day-of-month form/],
    ['0 0 1-L * *', /Invalid day-of-month form "1-L"/],
    ['0 0 * * 5#0', /nth weekday takes n from 1 to 5/],
    ['0 0 * * 5#6', /nth weekday takes n from 1 to 5/],
    ['0 0 * * 8#1', /expected a weekday 0-7/],
    ['0 0 * * FOO#1', /expected a weekday 0-7 or SUN-SAT/],
    ['0 0 * * L', /Invalid day-of-week form "L"/],
    ['0 0 * * #2', /Invalid day-of-week form/],
    ['0 0 L * 5L-MON', /may not be part of a range/],
    ['* L * * *', /Invalid value "L" in hour field/],
    ['@every 5m', /"@every" is not a cron macro here; create an interval schedule/],
    ['@reboot', /Unknown cron macro "@reboot"/],
    ['@daily 5', /Unknown cron macro/],
    ['hello world', /5 fields/],
  ];

  it.each(cases)('%j -> %s', (expression, message) => {
    let error: unknown;
    try {
      parseCron(expression);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InvalidCronError);
    expect(error).toBeInstanceOf(Error);
    expect((error as InvalidCronError).name).toBe('InvalidCronError');
    expect((error as InvalidCronError).expression).toBe(expression);
    expect((error as Error).message).toMatch(message);
  });

  it('rejects absurdly long input before parsing it', () => {
    expect(() => parseCron('* * * * * '.repeat(200))).toThrow(/longer than 512/);
  });

  it('names the offending field', () => {
    expect(() => parseCron('0 0 * 13 *')).toThrow(expect.objectContaining({ field: 'month' }));
  });

  it.each([null, undefined, 5, {}])('rejects non-string input %p', (input) => {
    expect(() => parseCron(input as unknown as string)).toThrow(InvalidCronError);
  });
});

describe('parseCron: parsed once per expression', () => {
  it('answers the same read-only result for the same text, and refuses bad text every time', () => {
    const first = parseCron('*/7 3 * * 1-5');
    expect(parseCron('*/7 3 * * 1-5')).toBe(first);
    expect(parseCron(' */7 3 * * 1-5')).toEqual(first);
    for (let i = 0; i < 2; i++) expect(() => parseCron('61 * * * *')).toThrow(InvalidCronError);
  });
});
