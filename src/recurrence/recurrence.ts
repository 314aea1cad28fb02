import { parseCron, type ParsedCron } from './cron-expression';
import { CronMatcher } from './cron-matcher';
import { excludedWallDays } from './excluded-dates';
import { intervalOccurrences } from './interval';
import { OffsetTimeline } from './offset-timeline';
import { applyDstPolicy, LocalTimeResolver, type ZonedInstant } from './local-time-resolver';
import { zoneOffsetFn } from './timezone';
import {
  DEFAULT_DST_POLICY,
  type DstPolicy,
  type Occurrence,
  type OccurrenceWindow,
  type RecurrenceSpec,
} from './types';
import { DAY_MS, formatLocalIso, HOUR_MS, SECOND_MS, wallMs } from './wall-time';

/**
 * Give up when no occurrence has been produced within this many years of local time. Long
 * enough for Feb 29 across a skipped leap year (8 years) and for a day-of-month + weekday
 * combination, which only recurs on the 28-year calendar cycle; short enough that a schedule
 * that can never fire (`0 0 30 2 *`) is rejected in well under a millisecond.
 */
export const SEARCH_HORIZON_YEARS = 30;
const HORIZON_MS = SEARCH_HORIZON_YEARS * 366 * DAY_MS;
// Occurrences are confined to years 0001-9999: four-digit ISO years are what callers and the
// DB expect, and it keeps zone lookups away from the edges of the Date range.
const MIN_INSTANT = wallMs(1, 1, 1);
const MAX_WALL = wallMs(9999, 12, 31, 23, 59, 59);
/** No zone has ever been more than 16h from UTC (LMT included). */
const MAX_ABS_OFFSET_MS = 16 * HOUR_MS;

const NONEXISTENT = ['skip', 'shift_forward'];
const REPEATED = ['first', 'last', 'both'];

/** Occurrences strictly after `after` (and within startAt/endAt), ascending, at most `count`. */
export function nextOccurrences(spec: RecurrenceSpec, after: Date, count: number): Occurrence[] {
  assertCount('count', count);
  const bounds = boundsOf(spec, instantOf('after', after) + 1, Infinity);
  const run = prepare(spec);
  if (count === 0 || bounds.from > bounds.to) return [];
  const out: Occurrence[] = [];
  for (const occurrence of run(bounds.from, bounds.to)) {
    out.push(occurrence);
    if (out.length >= count) break;
  }
  return out;
}

export function nextOccurrence(spec: RecurrenceSpec, after: Date): Occurrence | null {
  return nextOccurrences(spec, after, 1)[0] ?? null;
}

/**
 * Occurrences in (fromExclusive, toInclusive], ascending, at most `limit`; `truncated` tells a
 * catch-up caller that more were missed than it was given, so it can coalesce them.
 */
export function occurrencesBetween(
  spec: RecurrenceSpec,
  fromExclusive: Date,
  toInclusive: Date,
  limit: number,
): OccurrenceWindow {
  assertCount('limit', limit);
  const bounds = boundsOf(
    spec,
    instantOf('fromExclusive', fromExclusive) + 1,
    instantOf('toInclusive', toInclusive),
  );
  const run = prepare(spec);
  const occurrences: Occurrence[] = [];
  if (bounds.from > bounds.to) return { occurrences, truncated: false };
  for (const occurrence of run(bounds.from, bounds.to)) {
    if (occurrences.length === limit) return { occurrences, truncated: true };
    occurrences.push(occurrence);
  }
  return { occurrences, truncated: false };
}

/**
 * Smallest gap in seconds between consecutive runs: the tightest spacing within any single
 * matching day (exact, from the cron fields) combined with the gaps actually observed over the
 * next `sampleSize` occurrences after `from` (which catches cross-midnight gaps and DST effects
 * such as `repeated: 'both'`). Null when the schedule never runs, or runs at most once a day
 * and fewer than two runs fall in the sample.
 */
export function minimumIntervalSeconds(
  spec: RecurrenceSpec,
  from: Date,
  sampleSize = 1000,
): number | null {
  return minimumGapSeconds(spec, nextOccurrences(spec, from, sampleSize));
}

/**
 * `minimumIntervalSeconds` over a sample the caller already walked (its consecutive
 * occurrences from some instant), so one walk can give both the first instant and the gap.
 */
export function minimumGapSeconds(
  spec: RecurrenceSpec,
  sample: readonly Occurrence[],
): number | null {
  if (sample.length === 0) return null;
  if (spec.every !== undefined) return spec.every;
  let min = sameDayMinimumGapSeconds(parseCron(spec.cron!)) ?? Infinity;
  for (let i = 1; i < sample.length; i++) {
    min = Math.min(min, (sample[i].at.getTime() - sample[i - 1].at.getTime()) / SECOND_MS);
  }
  return Number.isFinite(min) ? min : null;
}

function sameDayMinimumGapSeconds(cron: ParsedCron): number | null {
  let previous = -1;
  let min = Infinity;
  for (const h of cron.hours) {
    for (const m of cron.minutes) {
      for (const s of cron.seconds) {
        const t = h * 3600 + m * 60 + s;
        if (previous >= 0) min = Math.min(min, t - previous);
        previous = t;
      }
    }
  }
  return Number.isFinite(min) ? min : null;
}

type Runner = (fromMs: number, toMs: number) => Generator<Occurrence>;

/** Validates the spec eagerly (generators would only throw on first use). */
function prepare(spec: RecurrenceSpec): Runner {
  const excluded = excludedWallDays(spec.excludeDates);
  const timeline = new OffsetTimeline(spec.timezone, zoneOffsetFn(spec.timezone));
  if ((spec.cron === undefined) === (spec.every === undefined)) {
    throw new RangeError('a recurrence has exactly one of cron and every');
  }
  if (spec.every !== undefined) {
    const everyMs = spec.every * SECOND_MS;
    if (!Number.isSafeInteger(spec.every) || !Number.isSafeInteger(everyMs) || spec.every < 1) {
      throw new RangeError(`every must be a whole number of seconds >= 1, got ${spec.every}`);
    }
    if (spec.dstPolicy != null) throw new RangeError('dstPolicy applies to cron recurrences only');
    const anchorMs = instantOf('anchorAt', spec.anchorAt!);
    return (fromMs, toMs) =>
      intervalOccurrences(
        anchorMs,
        everyMs,
        timeline,
        new LocalTimeResolver(timeline),
        excluded,
        fromMs,
        toMs,
        HORIZON_MS,
      );
  }
  const matcher = new CronMatcher(parseCron(spec.cron!), excluded);
  const policy = policyOf(spec.dstPolicy);
  return (fromMs, toMs) =>
    occurrences(matcher, new LocalTimeResolver(timeline), policy, fromMs, toMs);
}

/**
 * Walks matching wall times in local order and resolves each to instants. Local order is not
 * always UTC order (with `both`, the second 01:30 comes after the first 01:45), so instants wait
 * in `pending` until no later wall time can produce anything earlier: a wall time W maps to an
 * instant >= W - (largest nearby offset), so everything below that bound is final.
 */
function* occurrences(
  matcher: CronMatcher,
  resolver: LocalTimeResolver,
  policy: DstPolicy,
  fromMs: number,
  toMs: number,
): Generator<Occurrence> {
  // Wall times before this cannot reach `fromMs` (offsets near `fromMs` are all >= the min).
  let cursor = fromMs + resolver.nearbyOffsets(fromMs)[0];
  // Wall times after this can only produce instants after `toMs`. The bound uses the zone's
  // actual offsets near `toMs` (not the 16 h worst case), so a bounded window over a
  // per-second cron walks seconds, not the next sixteen hours of them.
  const nearTo = Number.isFinite(toMs) ? resolver.nearbyOffsets(toMs) : [MAX_ABS_OFFSET_MS];
  const lastWall = Math.min(toMs + nearTo[nearTo.length - 1], MAX_WALL);
  let progressWall = cursor;
  const pending: ZonedInstant[] = [];
  const emit = ({ instant, offset }: ZonedInstant): Occurrence => ({
    at: new Date(instant),
    local: formatLocalIso(instant, offset),
  });

  for (;;) {
    const wall = matcher.next(cursor, Math.min(progressWall + HORIZON_MS, lastWall));
    if (wall === null) break;
    cursor = wall + SECOND_MS;
    for (const zoned of applyDstPolicy(resolver.resolve(wall), policy)) {
      if (zoned.instant < fromMs || zoned.instant > toMs) continue;
      insertUnique(pending, zoned);
      // The horizon counts from the last run found, so a sparse schedule is never cut short.
      progressWall = wall;
    }
    const nearby = resolver.nearbyOffsets(wall);
    const finalBelow = wall - nearby[nearby.length - 1];
    while (pending.length > 0 && pending[0].instant < finalBelow) yield emit(pending.shift()!);
  }
  for (const zoned of pending) yield emit(zoned);
}

/** Sorted insert that drops duplicates (several gap times shifted to the same instant). */
function insertUnique(sorted: ZonedInstant[], value: ZonedInstant): void {
  let i = sorted.length;
  while (i > 0 && sorted[i - 1].instant > value.instant) i--;
  if (i > 0 && sorted[i - 1].instant === value.instant) return;
  sorted.splice(i, 0, value);
}

function boundsOf(spec: RecurrenceSpec, fromMs: number, toMs: number) {
  const startAt = spec.startAt == null ? -Infinity : instantOf('startAt', spec.startAt);
  const endAt = spec.endAt == null ? Infinity : instantOf('endAt', spec.endAt);
  return { from: Math.max(fromMs, startAt, MIN_INSTANT), to: Math.min(toMs, endAt) };
}

function policyOf(policy: DstPolicy | undefined): DstPolicy {
  if (policy == null) return DEFAULT_DST_POLICY;
  if (!NONEXISTENT.includes(policy.nonexistent) || !REPEATED.includes(policy.repeated)) {
    throw new RangeError(
      `Invalid dstPolicy ${JSON.stringify(policy)}: nonexistent must be one of ` +
        `${NONEXISTENT.join('|')}, repeated one of ${REPEATED.join('|')}`,
    );
  }
  return policy;
}

function instantOf(name: string, date: Date): number {
  const ms = date instanceof Date ? date.getTime() : NaN;
  if (Number.isNaN(ms)) throw new RangeError(`${name} must be a valid Date`);
  return ms;
}

function assertCount(name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  }
}
