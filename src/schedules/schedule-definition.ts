import type { OverlapPolicy } from '../overlap';
import type { RunPriority } from '../run-vocabulary';
import { FieldError, PayloadTooLargeError, ValidationError } from '../common';
import {
  DEFAULT_DST_POLICY,
  DstPolicy,
  InvalidCronError,
  isValidTimezone,
  minimumIntervalSeconds,
  nextOccurrence,
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
  flexibleWindowSeconds?: number;
}

/**
 * What checking cron recurrences at one instant found, by recurrence: the check walks up to 200
 * instants (about half a millisecond) and the schedules of one batch share a few recurrences.
 * Each entry also keeps the recurrence's first instant after `at`: its schedules' first due.
 */
export class FiringChecks {
  private readonly found = new Map<string, { problems: FieldError[]; first: Date | null }>();

  constructor(readonly at: Date) {}

  get size(): number {
    return this.found.size;
  }

  /** What was found for `definition`'s recurrence, if checked at `now`. */
  get(definition: ScheduleDefinition, now: Date) {
    const key = recurrenceKey(definition);
    return key === null || now.getTime() !== this.at.getTime() ? undefined : this.found.get(key);
  }

  set(definition: ScheduleDefinition, found: { problems: FieldError[]; first: Date | null }) {
    const key = recurrenceKey(definition);
    if (key !== null) this.found.set(key, found);
  }
}

/**
 * Turns client input into a complete definition with defaults applied, or throws one
 * ValidationError listing every semantic problem (the rules that the DTO shapes cannot say:
 * runAt xor cron, a cron that parses and fires, a real timezone, bounds that make sense).
 * Calls with the same `now` may share `firingChecks`.
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
  const timing = timingOf(input, errors);
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
    flexibleWindowSeconds: input.flexibleWindowSeconds ?? 0,
  };
  errors.push(...firingProblems(definition, now, firingChecks));
  if (errors.length === 0) errors.push(...windowProblems(definition, now));
  if (errors.length > 0) throw new ValidationError('the schedule is invalid', errors);
  return definition;
}

function timingOf(input: ScheduleInput, errors: FieldError[]): Timing | null {
  const hasRunAt = input.runAt != null;
  const hasCron = input.cron != null;
  if (hasRunAt === hasCron) {
    errors.push({
      field: 'runAt',
      message: 'exactly one of runAt or cron (with timezone) is required',
    });
    return null;
  }
  if (hasRunAt) {
    if (input.timezone != null || input.dstPolicy != null) {
      errors.push({
        field: 'timezone',
        message: 'timezone and dstPolicy apply to cron schedules only',
      });
    }
    return { kind: 'once', runAt: input.runAt! };
  }
  const timezone = input.timezone;
  if (timezone == null) {
    errors.push({
      field: 'timezone',
      message: 'timezone is required with cron (an IANA name, e.g. Europe/Berlin)',
    });
  } else if (!isValidTimezone(timezone)) {
    errors.push({
      field: 'timezone',
      message: `unknown timezone "${timezone}" (use an IANA name)`,
    });
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
    timezone: timezone ?? '',
    dstPolicy: { ...DEFAULT_DST_POLICY, ...input.dstPolicy },
  };
}

function firingProblems(
  definition: ScheduleDefinition,
  now: Date,
  checks?: FiringChecks,
): FieldError[] {
  const known = checks?.get(definition, now);
  if (known) return known.problems;
  const problems: FieldError[] = [];
  const first = checkFiring(definition, now, problems);
  checks?.set(definition, { problems, first });
  return problems;
}

/** Cron definitions with one recurrence (and bounds) have one key; one-time ones have none. */
function recurrenceKey(definition: ScheduleDefinition): string | null {
  const { timing } = definition;
  if (timing.kind !== 'cron') return null;
  return [
    timing.cron,
    timing.timezone,
    timing.dstPolicy.nonexistent,
    timing.dstPolicy.repeated,
    definition.startAt?.getTime(),
    definition.endAt?.getTime(),
  ].join('\u0000');
}

/** Pushes what is wrong with when the definition fires; returns a cron's first instant. */
function checkFiring(definition: ScheduleDefinition, now: Date, errors: FieldError[]): Date | null {
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
    return null;
  }
  const spec = recurrenceSpec(definition)!;
  const first = nextOccurrence(spec, now);
  if (!first) {
    errors.push({
      field: 'cron',
      message: 'the cron expression never fires within the schedule bounds',
    });
    return null;
  }
  if (first.at > horizon) {
    errors.push({
      field: 'cron',
      message: `the first run must be within ${SCHEDULE_LIMITS.maxHorizonDays} days`,
    });
  }
  const interval = minimumIntervalSeconds(spec, now, 200);
  if (interval !== null && interval < SCHEDULE_LIMITS.minIntervalSeconds) {
    errors.push({
      field: 'cron',
      message: `runs may not be closer than ${SCHEDULE_LIMITS.minIntervalSeconds} s apart`,
    });
  }
  return first.at;
}

/**
 * A flexible window must end before the next run's nominal instant: one instant of a schedule
 * is planned at a time, and runs keep their order.
 */
function windowProblems(definition: ScheduleDefinition, now: Date): FieldError[] {
  const window = definition.flexibleWindowSeconds;
  if (window <= 0 || definition.timing.kind === 'once') return [];
  const interval = minimumIntervalSeconds(recurrenceSpec(definition)!, now, 200);
  if (interval === null || window < interval) return [];
  return [
    {
      field: 'flexibleWindowSeconds',
      message: `must be shorter than the closest gap between two runs (${interval} s)`,
    },
  ];
}

export function recurrenceSpec(definition: ScheduleDefinition): RecurrenceSpec | null {
  const { timing } = definition;
  if (timing.kind !== 'cron') return null;
  return {
    cron: timing.cron,
    timezone: timing.timezone,
    dstPolicy: timing.dstPolicy,
    startAt: definition.startAt,
    endAt: definition.endAt,
  };
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
  const known = checks?.get(definition, after);
  if (known) return known.first;
  return nextOccurrence(recurrenceSpec(definition)!, after)?.at ?? null;
}
