import type { OverlapPolicy } from '../overlap';
import type { RunPriority } from '../run-vocabulary';
import { FieldError, PayloadTooLargeError, ValidationError } from '../common';
import {
  DEFAULT_DST_POLICY,
  DstPolicy,
  InvalidCronError,
  isLocalDate,
  isValidTimezone,
  minimumGapSeconds,
  nextOccurrence,
  nextOccurrences,
  parseCron,
  RecurrenceSpec,
} from '../recurrence';
import {
  DEFAULT_RETRY_POLICY,
  MissedRunPolicy,
  RetryPolicy,
  ScheduleDefinition,
  Timing,
} from './schedule';
import { SCHEDULE_LIMITS } from './schedule-limits';

/** A definition as a client sends it (already shape-checked by the DTO layer). */
export interface ScheduleInput {
  name: string;
  targetId: string;
  payload?: Record<string, unknown>;
  runAt?: Date | null;
  cron?: string | null;
  timezone?: string | null;
  dstPolicy?: Partial<DstPolicy>;
  startAt?: Date | null;
  endAt?: Date | null;
  missedRunPolicy?: MissedRunPolicy;
  maxCatchUp?: number;
  overlapPolicy?: OverlapPolicy;
  retryPolicy?: Partial<RetryPolicy>;
  priority?: RunPriority;
  startDeadlineSeconds?: number | null;
  /** Interval schedules: seconds between runs (xor runAt and cron), from anchorAt. */
  every?: number | null;
  /** The first run of an interval schedule (default: the instant it is created). */
  anchorAt?: Date | null;
  labels?: Record<string, string>;
  excludeDates?: string[] | null;
  calendarId?: string | null;
  /** The dates of calendarId, read by the service (calendars never change). */
  calendarDates?: string[];
  maxRuns?: number | null;
  pauseAfterConsecutiveFailures?: number | null;
  lateAfterSeconds?: number | null;
  flexibleWindowSeconds?: number;
}

/** A label key: letters, digits and `._/-`, starting and ending with a letter or digit. */
const LABEL_KEY = /^[A-Za-z0-9](?:[A-Za-z0-9._/-]*[A-Za-z0-9])?$/;

/** How many of a recurrence's next instants its checks walk (about half a millisecond). */
const SURVEY_SAMPLE = 200;

/** What walking a recurrence's next instants from `fromMs` found. */
interface RecurrenceSurvey {
  fromMs: number;
  /** Its first instant after `fromMs`; null: it never fires again. */
  first: Date | null;
  /** The closest gap between two of its runs (see `minimumIntervalSeconds`). */
  minimumIntervalSeconds: number | null;
}

/**
 * Surveys of recurrences, shared by every create the holder makes: the checks walk up to 200
 * instants of a recurrence, and creates share a few recurrences (a batch's items, a team's daily
 * report). A survey taken at an earlier instant is still exact at `now` while none of the
 * recurrence's instants fell in between: the instants after `now` are then exactly those after
 * the survey. So a survey is used until its recurrence's first instant, then taken again.
 * Bounded: past `capacity` recurrences, the oldest taken is forgotten first.
 */
export class FiringChecks {
  private readonly surveys = new Map<string, RecurrenceSurvey>();

  constructor(private readonly capacity = 1_000) {}

  get size(): number {
    return this.surveys.size;
  }

  /** A survey exact at `now`, taken now if none is kept; null for a one-time definition. */
  surveyAt(definition: ScheduleDefinition, now: Date): RecurrenceSurvey | null {
    const key = recurrenceKey(definition);
    if (key === null) return null;
    const kept = this.kept(key, now);
    if (kept) return kept;
    const survey = surveyOf(definition, now)!;
    this.surveys.delete(key);
    if (this.surveys.size >= this.capacity) {
      this.surveys.delete(this.surveys.keys().next().value!);
    }
    this.surveys.set(key, survey);
    return survey;
  }

  /** The first instant after `after`, when a survey exact at `after` is kept. */
  firstAfter(definition: ScheduleDefinition, after: Date): Date | null | undefined {
    const key = recurrenceKey(definition);
    return key === null ? undefined : this.kept(key, after)?.first;
  }

  private kept(key: string, now: Date): RecurrenceSurvey | undefined {
    const survey = this.surveys.get(key);
    const at = now.getTime();
    if (!survey || survey.fromMs > at) return undefined;
    return survey.first === null || survey.first.getTime() > at ? survey : undefined;
  }
}

/** Walks the definition's recurrence from `now`; a one-time definition has none (null). */
function surveyOf(definition: ScheduleDefinition, now: Date): RecurrenceSurvey | null {
  const spec = recurrenceSpec(definition);
  if (spec === null) return null;
  const sample = nextOccurrences(spec, now, SURVEY_SAMPLE);
  return {
    fromMs: now.getTime(),
    first: sample[0]?.at ?? null,
    minimumIntervalSeconds: minimumGapSeconds(spec, sample),
  };
}

/**
 * Turns client input into a complete definition with defaults applied, or throws one
 * ValidationError listing every semantic problem (the rules that the DTO shapes cannot say:
 * runAt xor cron, a cron that parses and fires, a real timezone, bounds that make sense).
 * Creates may share `firingChecks`, across calls and instants.
 */
export function buildDefinition(
  input: ScheduleInput,
  now: Date,
  firingChecks?: FiringChecks,
): ScheduleDefinition {
  const errors: FieldError[] = [];
  const payload = input.payload ?? {};
  if (Buffer.byteLength(JSON.stringify(payload), 'utf8') > SCHEDULE_LIMITS.maxPayloadBytes) {
    throw new PayloadTooLargeError(`payload exceeds ${SCHEDULE_LIMITS.maxPayloadBytes} bytes`);
  }
  const timing = timingOf(input, now, errors);
  const labels = labelsOf(input.labels, errors);
  const excludeDates = excludeDatesOf(input, timing, errors);
  const late = input.lateAfterSeconds ?? null;
  if (
    late !== null &&
    (!Number.isInteger(late) || late < 0 || late > SCHEDULE_LIMITS.maxLateAfterSeconds)
  ) {
    errors.push({
      field: 'lateAfterSeconds',
      message: `lateAfterSeconds must be an integer from 0 to ${SCHEDULE_LIMITS.maxLateAfterSeconds}`,
    });
  }
  const maxRuns = input.maxRuns ?? null;
  if (maxRuns !== null && timing?.kind === 'once') {
    errors.push({ field: 'maxRuns', message: 'maxRuns applies to recurring schedules only' });
  }
  const startAt = input.startAt ?? null;
  const endAt = input.endAt ?? null;
  if (startAt && endAt && startAt >= endAt)
    errors.push({ field: 'endAt', message: 'endAt must be after startAt' });
  if (endAt && endAt <= now)
    errors.push({ field: 'endAt', message: 'endAt must be in the future' });
  const retryPolicy = { ...DEFAULT_RETRY_POLICY, ...input.retryPolicy };
  if (retryPolicy.initialDelayMs > retryPolicy.maxDelayMs) {
    errors.push({
      field: 'retryPolicy.maxDelayMs',
      message: 'maxDelayMs must be at least initialDelayMs',
    });
  }
  if (errors.length > 0) throw new ValidationError('the schedule is invalid', errors);
  const definition: ScheduleDefinition = {
    name: input.name,
    targetId: input.targetId,
    payload,
    timing: timing!,
    startAt,
    endAt,
    missedRunPolicy: input.missedRunPolicy ?? 'latest',
    maxCatchUp: input.maxCatchUp ?? 10,
    overlapPolicy: input.overlapPolicy ?? 'skip',
    retryPolicy,
    priority: input.priority ?? 'normal',
    startDeadlineSeconds: input.startDeadlineSeconds ?? null,
    labels,
    excludeDates,
    calendarId: input.calendarId ?? null,
    excludedDates: input.calendarId ? [...(input.calendarDates ?? [])] : excludeDates,
    maxRuns,
    pauseAfterConsecutiveFailures: input.pauseAfterConsecutiveFailures ?? null,
    lateAfterSeconds: input.lateAfterSeconds ?? null,
    flexibleWindowSeconds: input.flexibleWindowSeconds ?? 0,
  };
  const survey = firingChecks ? firingChecks.surveyAt(definition, now) : surveyOf(definition, now);
  errors.push(...firingProblems(definition, now, survey));
  if (errors.length === 0) errors.push(...windowProblems(definition, survey));
  if (errors.length > 0) throw new ValidationError('the schedule is invalid', errors);
  return definition;
}

function timingOf(input: ScheduleInput, now: Date, errors: FieldError[]): Timing | null {
  const hasRunAt = input.runAt != null;
  const hasCron = input.cron != null;
  const hasEvery = input.every != null;
  if (Number(hasRunAt) + Number(hasCron) + Number(hasEvery) !== 1) {
    errors.push({
      field: 'runAt',
      message: 'exactly one of runAt, cron (with timezone) or every is required',
    });
    return null;
  }
  if (hasRunAt) {
    if (input.timezone != null || input.dstPolicy != null) {
      errors.push({
        field: 'timezone',
        message: 'timezone and dstPolicy apply to cron and interval schedules only',
      });
    }
    if (input.anchorAt != null) {
      errors.push({ field: 'anchorAt', message: 'anchorAt applies to interval schedules only' });
    }
    return { kind: 'once', runAt: input.runAt! };
  }
  const timezone = timezoneOf(input, hasEvery, errors);
  if (hasEvery) {
    const every = input.every!;
    if (!Number.isSafeInteger(every) || every < SCHEDULE_LIMITS.minIntervalSeconds) {
      errors.push({
        field: 'every',
        message: `every must be a whole number of seconds, at least ${SCHEDULE_LIMITS.minIntervalSeconds}`,
      });
    } else if (every > SCHEDULE_LIMITS.maxEverySeconds) {
      errors.push({
        field: 'every',
        message: `every may be at most ${SCHEDULE_LIMITS.maxEverySeconds / 86_400} days`,
      });
    }
    if (input.dstPolicy != null) {
      errors.push({
        field: 'dstPolicy',
        message: 'dstPolicy applies to cron schedules only (an interval is absolute time)',
      });
    }
    return { kind: 'interval', everySeconds: every, anchorAt: input.anchorAt ?? now, timezone };
  }
  if (input.anchorAt != null) {
    errors.push({ field: 'anchorAt', message: 'anchorAt applies to interval schedules only' });
  }
  try {
    parseCron(input.cron!);
  } catch (error) {
    if (!(error instanceof InvalidCronError)) throw error;
    errors.push({ field: 'cron', message: error.message });
  }
  return {
    kind: 'cron',
    cron: input.cron!,
    timezone,
    dstPolicy: { ...DEFAULT_DST_POLICY, ...input.dstPolicy },
  };
}

/** Cron needs a zone; an interval reads local times in UTC unless it names one. */
function timezoneOf(input: ScheduleInput, interval: boolean, errors: FieldError[]): string {
  const timezone = input.timezone ?? (interval ? 'UTC' : null);
  if (timezone == null) {
    errors.push({
      field: 'timezone',
      message: 'timezone is required with cron (an IANA name, e.g. Europe/Berlin)',
    });
    return '';
  }
  if (!isValidTimezone(timezone)) {
    errors.push({
      field: 'timezone',
      message: `unknown timezone "${timezone}" (use an IANA name)`,
    });
  }
  return timezone;
}

function labelsOf(
  labels: Record<string, string> | undefined,
  errors: FieldError[],
): Record<string, string> {
  const entries = Object.entries(labels ?? {});
  if (entries.length > SCHEDULE_LIMITS.maxLabels) {
    errors.push({ field: 'labels', message: `at most ${SCHEDULE_LIMITS.maxLabels} labels` });
  }
  for (const [key, value] of entries) {
    if (key.length > SCHEDULE_LIMITS.maxLabelKeyLength || !LABEL_KEY.test(key)) {
      errors.push({
        field: `labels.${key.slice(0, 64)}`,
        message:
          `a label key has 1-${SCHEDULE_LIMITS.maxLabelKeyLength} letters, digits or ._/- and ` +
          'starts and ends with a letter or digit',
      });
    } else if (
      typeof value !== 'string' ||
      value.length > SCHEDULE_LIMITS.maxLabelValueLength ||
      /\p{Cc}/u.test(value)
    ) {
      errors.push({
        field: `labels.${key}`,
        message: `a label value is a string of at most ${SCHEDULE_LIMITS.maxLabelValueLength} characters without control characters`,
      });
    }
  }
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function excludeDatesOf(
  input: ScheduleInput,
  timing: Timing | null,
  errors: FieldError[],
): string[] {
  const dates = input.excludeDates ?? [];
  if (dates.length > 0 && input.calendarId != null) {
    errors.push({ field: 'excludeDates', message: 'give excludeDates or calendarId, not both' });
  }
  if ((dates.length > 0 || input.calendarId != null) && timing?.kind === 'once') {
    errors.push({
      field: 'excludeDates',
      message: 'excludeDates and calendarId apply to recurring schedules only',
    });
  }
  if (dates.length > SCHEDULE_LIMITS.maxExcludeDates) {
    errors.push({
      field: 'excludeDates',
      message: `at most ${SCHEDULE_LIMITS.maxExcludeDates} dates`,
    });
    return [];
  }
  const invalid = dates.find((date) => !isLocalDate(date));
  if (invalid !== undefined) {
    errors.push({
      field: 'excludeDates',
      message: `"${String(invalid).slice(0, 40)}" is not a local date (YYYY-MM-DD)`,
    });
    return [];
  }
  return [...new Set(dates)].sort();
}

/** Cron definitions with one recurrence (and bounds) have one key; one-time ones have none. */
function recurrenceKey(definition: ScheduleDefinition): string | null {
  const { timing } = definition;
  if (timing.kind === 'once') return null;
  return [
    timing.kind,
    timing.kind === 'cron' ? timing.cron : `${timing.everySeconds}@${timing.anchorAt.getTime()}`,
    timing.timezone,
    timing.kind === 'cron' ? timing.dstPolicy.nonexistent : '',
    timing.kind === 'cron' ? timing.dstPolicy.repeated : '',
    definition.startAt?.getTime(),
    definition.endAt?.getTime(),
    definition.excludedDates.join(','),
  ].join('\u0000');
}

/** What is wrong with when the definition fires (`survey`: its recurrence's, none if one-time). */
function firingProblems(
  definition: ScheduleDefinition,
  now: Date,
  survey: RecurrenceSurvey | null,
): FieldError[] {
  const errors: FieldError[] = [];
  const horizon = new Date(now.getTime() + SCHEDULE_LIMITS.maxHorizonDays * 86_400_000);
  const { timing } = definition;
  if (timing.kind === 'once') {
    if (timing.runAt <= now)
      errors.push({ field: 'runAt', message: 'runAt must be in the future' });
    if (timing.runAt > horizon) {
      errors.push({
        field: 'runAt',
        message: `runAt must be within ${SCHEDULE_LIMITS.maxHorizonDays} days`,
      });
    }
    if (definition.startAt || definition.endAt) {
      errors.push({ field: 'startAt', message: 'startAt and endAt apply to cron schedules only' });
    }
    return errors;
  }
  const field = timing.kind === 'cron' ? 'cron' : 'every';
  if (!survey?.first) {
    errors.push({
      field,
      message: `the ${field === 'cron' ? 'cron expression' : 'interval'} never fires within the schedule bounds (and excluded dates)`,
    });
    return errors;
  }
  if (survey.first > horizon) {
    errors.push({
      field,
      message: `the first run must be within ${SCHEDULE_LIMITS.maxHorizonDays} days`,
    });
  }
  const interval = survey.minimumIntervalSeconds;
  if (interval !== null && interval < SCHEDULE_LIMITS.minIntervalSeconds) {
    errors.push({
      field,
      message: `runs may not be closer than ${SCHEDULE_LIMITS.minIntervalSeconds} s apart`,
    });
  }
  return errors;
}

/**
 * A flexible window must end before the next run's nominal instant: one instant of a schedule
 * is planned at a time, and runs keep their order.
 */
function windowProblems(
  definition: ScheduleDefinition,
  survey: RecurrenceSurvey | null,
): FieldError[] {
  const window = definition.flexibleWindowSeconds;
  if (window <= 0 || survey === null) return [];
  const interval = survey.minimumIntervalSeconds;
  if (interval === null || window < interval) return [];
  return [
    {
      field: 'flexibleWindowSeconds',
      message: `must be shorter than the closest gap between two runs (${interval} s)`,
    },
  ];
}

export function recurrenceSpec(
  definition: Pick<ScheduleDefinition, 'timing' | 'startAt' | 'endAt' | 'excludedDates'>,
): RecurrenceSpec | null {
  const { timing } = definition;
  if (timing.kind === 'once') return null;
  const bounds = {
    timezone: timing.timezone,
    startAt: definition.startAt,
    endAt: definition.endAt,
    excludeDates: definition.excludedDates,
  };
  return timing.kind === 'cron'
    ? { ...bounds, cron: timing.cron, dstPolicy: timing.dstPolicy }
    : { ...bounds, every: timing.everySeconds, anchorAt: timing.anchorAt };
}

/**
 * The first instant strictly after `after` at which the schedule is due, or null if never
 * (known already when `checks` checked its recurrence at `after`).
 */
export function nextDueAfter(
  definition: ScheduleDefinition,
  after: Date,
  checks?: FiringChecks,
): Date | null {
  const { timing } = definition;
  if (timing.kind === 'once') return timing.runAt > after ? timing.runAt : null;
  const known = checks?.firstAfter(definition, after);
  if (known !== undefined) return known;
  return nextOccurrence(recurrenceSpec(definition)!, after)?.at ?? null;
}
