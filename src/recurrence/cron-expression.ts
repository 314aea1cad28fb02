import { InvalidCronError } from './errors';

/**
 * A validated cron expression reduced to the set of allowed values per field.
 * Value arrays are sorted ascending and de-duplicated; day-of-week uses 0-6 (0 = Sunday).
 */
export interface ParsedCron {
  readonly source: string;
  readonly hasSeconds: boolean;
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: readonly number[];
  readonly months: readonly number[];
  readonly daysOfWeek: readonly number[];
  /**
   * Vixie cron decides between OR and AND day matching by whether each day field *starts with*
   * '*' (so `*` and `*\/2` both count as unrestricted). We keep that rule because it is what
   * crontab users get on Linux (cronie) and what crontab.guru explains.
   */
  readonly dayOfMonthRestricted: boolean;
  readonly dayOfWeekRestricted: boolean;
}

interface FieldSpec {
  readonly label: string;
  readonly min: number;
  readonly max: number;
  /**
   * Largest step accepted: the field's number of distinct values. A larger step can only be a
   * misunderstanding (`*\/90` hoping for "every 90 minutes"), so it is refused.
   */
  readonly maxStep: number;
  readonly names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES = [
  'JAN',
  'FEB',
  'MAR',
  'APR',
  'MAY',
  'JUN',
  'JUL',
  'AUG',
  'SEP',
  'OCT',
  'NOV',
  'DEC',
];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const SECOND: FieldSpec = { label: 'second', min: 0, max: 59, maxStep: 60 };
const MINUTE: FieldSpec = { label: 'minute', min: 0, max: 59, maxStep: 60 };
const HOUR: FieldSpec = { label: 'hour', min: 0, max: 23, maxStep: 24 };
const DAY_OF_MONTH: FieldSpec = { label: 'day-of-month', min: 1, max: 31, maxStep: 31 };
const MONTH: FieldSpec = {
  label: 'month',
  min: 1,
  max: 12,
  maxStep: 12,
  names: Object.fromEntries(MONTH_NAMES.map((n, i) => [n, i + 1])),
};
// 7 is accepted as a second spelling of Sunday, as in Vixie cron.
const DAY_OF_WEEK: FieldSpec = {
  label: 'day-of-week',
  min: 0,
  max: 7,
  maxStep: 7,
  names: Object.fromEntries(DAY_NAMES.map((n, i) => [n, i])),
};

const MAX_EXPRESSION_LENGTH = 512;

/** Parses a 5-field (`min hour dom month dow`) or 6-field (`sec min hour dom month dow`) cron. */
export function parseCron(expression: string): ParsedCron {
  if (typeof expression !== 'string') {
    throw new InvalidCronError('Cron expression must be a string', String(expression));
  }
  const source = expression.trim();
  const fail = (message: string, field?: string): never => {
    throw new InvalidCronError(message, expression, field);
  };
  if (source === '') fail('Cron expression is empty');
  if (source.length > MAX_EXPRESSION_LENGTH) {
    fail(`Cron expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  }
  if (source.startsWith('@')) {
    fail(`Cron macros such as "${source.split(/\s+/)[0]}" are not supported; write the fields out`);
  }

  const parts = source.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    fail(
      `Cron expression must have 5 fields (minute hour day-of-month month day-of-week) or 6 ` +
        `fields (second first), got ${parts.length}`,
    );
  }
  const hasSeconds = parts.length === 6;
  const [sec, min, hour, dom, month, dow] = hasSeconds ? parts : ['0', ...parts];

  const dayOfMonth = parseField(dom, DAY_OF_MONTH, fail);
  const dayOfWeek = parseField(dow, DAY_OF_WEEK, fail);
  return {
    source,
    hasSeconds,
    seconds: parseField(sec, SECOND, fail).values,
    minutes: parseField(min, MINUTE, fail).values,
    hours: parseField(hour, HOUR, fail).values,
    daysOfMonth: dayOfMonth.values,
    months: parseField(month, MONTH, fail).values,
    daysOfWeek: [...new Set(dayOfWeek.values.map((d) => d % 7))].sort((a, b) => a - b),
    dayOfMonthRestricted: !dayOfMonth.startsWithStar,
    dayOfWeekRestricted: !dayOfWeek.startsWithStar,
  };
}

type Fail = (message: string, field?: string) => never;

function parseField(
  text: string,
  spec: FieldSpec,
  fail: Fail,
): { values: number[]; startsWithStar: boolean } {
  const where = `${spec.label} field "${text}"`;
  if (text.includes('?')) {
    fail(`'?' is not supported (${where}); use '*' instead`, spec.label);
  }
  if (text.includes('#')) {
    fail(`'#' (nth weekday of the month) is not supported (${where})`, spec.label);
  }

  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail(`Empty list element in ${where}`, spec.label);
    const slash = item.split('/');
    if (slash.length > 2) fail(`Too many '/' in "${item}" (${where})`, spec.label);
    const [rangeText, stepText] = slash;
    const step = stepText === undefined ? 1 : parseStep(stepText, spec, where, fail);

    let from: number;
    let to: number;
    if (rangeText === '*') {
      from = spec.min;
      to = spec.max;
    } else if (rangeText.includes('-')) {
      const ends = rangeText.split('-');
      if (ends.length !== 2) fail(`Invalid range "${rangeText}" (${where})`, spec.label);
      from = parseAtom(ends[0], spec, where, fail);
      to = parseAtom(ends[1], spec, where, fail);
      // MON-SUN reads naturally but SUN is 0; let a named SUN close a range as 7.
      if (spec === DAY_OF_WEEK && to === 0 && from > 0 && /^sun$/i.test(ends[1])) to = 7;
      if (from > to) {
        fail(
          `Range "${rangeText}" runs backwards (${where}); wrap-around ranges are not supported`,
          spec.label,
        );
      }
    } else {
      from = parseAtom(rangeText, spec, where, fail);
      // `a/n` means "from a to the end of the field, every n" (as in cronie and most parsers).
      to = stepText === undefined ? from : spec.max;
    }
    for (let v = from; v <= to; v += step) values.add(v);
  }
  return {
    values: [...values].sort((a, b) => a - b),
    startsWithStar: text.startsWith('*'),
  };
}

function parseStep(text: string, spec: FieldSpec, where: string, fail: Fail): number {
  if (!/^\d+$/.test(text)) fail(`Invalid step "${text}" (${where}); expected a number`, spec.label);
  const step = Number(text);
  if (step === 0) fail(`Step must be at least 1, got 0 (${where})`, spec.label);
  if (step > spec.maxStep) {
    fail(
      `Step ${step} is larger than the ${spec.label} range ${spec.min}-${spec.max} (${where})`,
      spec.label,
    );
  }
  return step;
}

function parseAtom(text: string, spec: FieldSpec, where: string, fail: Fail): number {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.min || value > spec.max) {
      fail(
        `Value ${text} is out of range for ${spec.label} (${spec.min}-${spec.max}) (${where})`,
        spec.label,
      );
    }
    return value;
  }
  const upper = text.toUpperCase();
  if (spec.names && Object.hasOwn(spec.names, upper)) return spec.names[upper];
  if (
    (spec === DAY_OF_MONTH || spec === DAY_OF_WEEK) &&
    /^(L|W|LW|\d+L|\d+W|L-?\d+)$/.test(upper)
  ) {
    fail(`'L' and 'W' (last day / nearest weekday) are not supported (${where})`, spec.label);
  }
  if (text === '') fail(`Missing value in ${where}`, spec.label);
  const hint = spec.names ? ` or a name like ${Object.keys(spec.names)[0]}` : '';
  return fail(`Invalid value "${text}" in ${where}; expected a number${hint}`, spec.label);
}
