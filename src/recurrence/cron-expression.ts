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
  /** The day-of-month forms that depend on the month (Quartz): `L`, `L-n`, `nW`, `LW`. */
  readonly monthDays: MonthDayRules;
  /** The day-of-week forms that depend on the month: `5L` (last Friday), `MON#2`. */
  readonly weekdaysOfMonth: WeekdayOfMonthRules;
}

export interface MonthDayRules {
  /** Days before the month's last day: `L` is 0, `L-3` is 3. */
  readonly fromLast: readonly number[];
  /** `15W`: the weekday (Mon-Fri) nearest the 15th, never crossing into another month. */
  readonly nearestWeekday: readonly number[];
  /** `LW`: the month's last weekday (Mon-Fri). */
  readonly lastWeekday: boolean;
}

export interface WeekdayOfMonthRules {
  /** `MON#2` is { weekday: 1, nth: 2 }: the second Monday of the month. */
  readonly nth: readonly { weekday: number; nth: number }[];
  /** `5L` is 5: the month's last Friday. */
  readonly last: readonly number[];
}

/**
 * The macros of Vixie cron, cron-parser and Kubernetes CronJobs, as the fields they stand for.
 * `@reboot` has no instant and `@every` is an interval schedule (`every` + `anchorAt`).
 */
export const CRON_MACROS: Readonly<Record<string, string>> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

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

/**
 * Parsed expressions by their text, at most MAX_PARSED: the poller plans the same few crons batch
 * after batch, and creates share them too. A ParsedCron is read-only, so one can be shared.
 * Refused expressions are not kept: they throw again each time.
 */
const parsedByText = new Map<string, ParsedCron>();
const MAX_PARSED = 10_000;

/** Parses a 5-field (`min hour dom month dow`) or 6-field (`sec min hour dom month dow`) cron. */
export function parseCron(expression: string): ParsedCron {
  const known = typeof expression === 'string' ? parsedByText.get(expression) : undefined;
  if (known) return known;
  const parsed = parseCronText(expression);
  if (parsedByText.size >= MAX_PARSED) parsedByText.delete(parsedByText.keys().next().value!);
  parsedByText.set(expression, parsed);
  return parsed;
}

function parseCronText(expression: string): ParsedCron {
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
  let fields = source;
  if (source.startsWith('@')) {
    const macro = CRON_MACROS[source.toLowerCase()];
    if (macro === undefined) {
      const name = source.split(/\s+/)[0];
      fail(
        name.toLowerCase() === '@every'
          ? `"@every" is not a cron macro here; create an interval schedule (every + anchorAt)`
          : `Unknown cron macro "${name}"; supported: ${Object.keys(CRON_MACROS).join(', ')}`,
      );
    }
    fields = macro;
  }

  const parts = fields.split(/\s+/);
  if (parts.length !== 5 && parts.length !== 6) {
    fail(
      `Cron expression must have 5 fields (minute hour day-of-month month day-of-week) or 6 ` +
        `fields (second first), got ${parts.length}`,
    );
  }
  const hasSeconds = parts.length === 6;
  const [sec, min, hour, dom, month, dow] = hasSeconds ? parts : ['0', ...parts];

  const monthDays = {
    fromLast: [] as number[],
    nearestWeekday: [] as number[],
    lastWeekday: false,
  };
  const weekdaysOfMonth = { nth: [] as { weekday: number; nth: number }[], last: [] as number[] };
  const dayOfMonth = parseField(dom, DAY_OF_MONTH, fail, (item, where) =>
    monthDayRule(item, where, monthDays, fail),
  );
  const dayOfWeek = parseField(dow, DAY_OF_WEEK, fail, (item, where) =>
    weekdayOfMonthRule(item, where, weekdaysOfMonth, fail),
  );
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
    monthDays: {
      fromLast: sortedUnique(monthDays.fromLast),
      nearestWeekday: sortedUnique(monthDays.nearestWeekday),
      lastWeekday: monthDays.lastWeekday,
    },
    weekdaysOfMonth: {
      nth: weekdaysOfMonth.nth,
      last: sortedUnique(weekdaysOfMonth.last),
    },
  };
}

type Fail = (message: string, field?: string) => never;
/** Takes a list item that is a month-dependent day form (L, W, #); false if it is not one. */
type SpecialItem = (item: string, where: string) => boolean;

function sortedUnique(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

/** `L`, `L-n` (n days before the last), `nW` (weekday nearest the nth), `LW` (last weekday). */
function monthDayRule(
  item: string,
  where: string,
  rules: { fromLast: number[]; nearestWeekday: number[]; lastWeekday: boolean },
  fail: Fail,
): boolean {
  const upper = item.toUpperCase();
  if (upper === 'L') return rules.fromLast.push(0) > 0;
  if (upper === 'LW') return (rules.lastWeekday = true);
  const beforeLast = /^L-(\d{1,2})$/.exec(upper);
  if (beforeLast) {
    const n = Number(beforeLast[1]);
    if (n < 1 || n > 30) fail(`"${item}": L-n takes n from 1 to 30 (${where})`, 'day-of-month');
    return rules.fromLast.push(n) > 0;
  }
  const nearest = /^(\d{1,2})W$/.exec(upper);
  if (nearest) {
    const day = Number(nearest[1]);
    if (day < 1 || day > 31)
      fail(`"${item}": nW takes a day from 1 to 31 (${where})`, 'day-of-month');
    return rules.nearestWeekday.push(day) > 0;
  }
  if (/[LW]/.test(upper)) {
    fail(
      `Invalid day-of-month form "${item}" (${where}); expected L, L-n, nW or LW`,
      'day-of-month',
    );
  }
  return false;
}

/** `dL` (the month's last weekday d, e.g. 5L or FRIL) and `d#n` (its nth, n from 1 to 5). */
function weekdayOfMonthRule(
  item: string,
  where: string,
  rules: { nth: { weekday: number; nth: number }[]; last: number[] },
  fail: Fail,
): boolean {
  const upper = item.toUpperCase();
  const weekday = (text: string): number => {
    const value = /^\d$/.test(text) ? Number(text) : DAY_NAMES.indexOf(text);
    if (value < 0 || value > 7) {
      fail(`"${item}": expected a weekday 0-7 or SUN-SAT before L or # (${where})`, 'day-of-week');
    }
    return value % 7;
  };
  const nth = /^([A-Z]{3}|\d)#(\d+)$/.exec(upper);
  if (nth) {
    const n = Number(nth[2]);
    if (n < 1 || n > 5)
      fail(`"${item}": the nth weekday takes n from 1 to 5 (${where})`, 'day-of-week');
    rules.nth.push({ weekday: weekday(nth[1]), nth: n });
    return true;
  }
  const last = /^([A-Z]{3}|\d)L$/.exec(upper);
  if (last) return rules.last.push(weekday(last[1])) > 0;
  if (upper.includes('#') || upper === 'L') {
    fail(
      `Invalid day-of-week form "${item}" (${where}); expected d#n (MON#2) or dL (5L)`,
      'day-of-week',
    );
  }
  return false;
}

function parseField(
  text: string,
  spec: FieldSpec,
  fail: Fail,
  special?: SpecialItem,
): { values: number[]; startsWithStar: boolean } {
  const where = `${spec.label} field "${text}"`;
  // Quartz writes '?' for "no specific value" in one of the day fields: the same as '*'.
  if (text === '?' && special) return { values: rangeOf(spec), startsWithStar: true };
  if (text.includes('?')) {
    fail(`'?' is only accepted alone in a day field (${where}); use '*' instead`, spec.label);
  }

  const values = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') fail(`Empty list element in ${where}`, spec.label);
    if (special?.(item, where)) continue;
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

function rangeOf(spec: FieldSpec): number[] {
  const values: number[] = [];
  for (let v = spec.min; v <= spec.max; v++) values.push(v);
  return values;
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
  if (/[LW#]/.test(upper) && (spec === DAY_OF_MONTH || spec === DAY_OF_WEEK)) {
    fail(`"${text}" may not be part of a range or step (${where})`, spec.label);
  }
  if (text === '') fail(`Missing value in ${where}`, spec.label);
  const hint = spec.names ? ` or a name like ${Object.keys(spec.names)[0]}` : '';
  return fail(`Invalid value "${text}" in ${where}; expected a number${hint}`, spec.label);
}
