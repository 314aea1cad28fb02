import { parseCron, zoneOffsetFn } from '../recurrence';
import type { RunPriority } from '../run-vocabulary';

const MINUTE_MS = 60_000;
export const MINUTES_PER_DAY = 1440;
/** Every index of a window, for contributions that add to each minute (never mutated). */
const WINDOW_MINUTES: readonly number[] = Object.freeze(
  Array.from({ length: MINUTES_PER_DAY }, (_, i) => i),
);

/**
 * What one schedule adds to its tenant's projected runs per UTC minute. Recurring schedules are
 * reduced to a pattern that repeats every minute, every hour or every day, so that the tenant's
 * profile is at most 1 + 60 + 1,440 counters however many schedules it has, and a create
 * changes a handful of them (not a scan of the tenant's schedules):
 * - `minute`: the same runs in every minute (`* * * * * *` adds 60 to each);
 * - `hour`: runs at these minutes of every hour (`*\/15 * * * *`: 0, 15, 30, 45);
 * - `day`: runs at these minutes of every day, in UTC (`0 9 * * *` in Paris: 480 or 420);
 * - `instant`: a one-time run in the minute starting at `minute`.
 * A cron restricted to some days (day of month, month, day of week) counts as if it ran every
 * day: the profile is the busiest day's, so it may refuse early but never lets an overload in.
 * A local-time pattern is placed in UTC with the zone's offset when it was projected.
 */
export type LoadContribution =
  | { period: 'minute'; runs: number }
  | { period: 'hour'; slots: number[]; runs: number }
  | { period: 'day'; slots: number[]; runs: number }
  | { period: 'instant'; minute: string; runs: number };

/** The parts of a schedule its load depends on. */
export interface LoadSource {
  priority: RunPriority;
  timing: { kind: 'once'; runAt: Date } | { kind: 'cron'; cron: string; timezone: string };
  endAt: Date | null;
}

/**
 * A schedule's contribution at `now`, or null if it adds nothing: `low` schedules are exempt
 * (they agree to wait behind the others), and so is a schedule that cannot fire again.
 */
export function projectLoad(source: LoadSource, now: Date): LoadContribution | null {
  if (source.priority === 'low') return null;
  if (source.endAt && source.endAt <= now) return null;
  if (source.timing.kind === 'once') {
    const minute = new Date(Math.floor(source.timing.runAt.getTime() / MINUTE_MS) * MINUTE_MS);
    return { period: 'instant', minute: minute.toISOString(), runs: 1 };
  }
  const cron = parseCron(source.timing.cron);
  const runs = cron.seconds.length;
  const offsetMinutes = Math.round(zoneOffsetFn(source.timing.timezone)(now.getTime()) / MINUTE_MS);
  if (cron.hours.length === 24 && cron.minutes.length === 60) return { period: 'minute', runs };
  if (cron.hours.length === 24) {
    const slots = cron.minutes.map((m) => mod(m - offsetMinutes, 60));
    return { period: 'hour', slots: [...new Set(slots)].sort((a, b) => a - b), runs };
  }
  const slots = cron.hours.flatMap((h) =>
    cron.minutes.map((m) => mod(h * 60 + m - offsetMinutes, MINUTES_PER_DAY)),
  );
  return { period: 'day', slots: [...new Set(slots)].sort((a, b) => a - b), runs };
}

/**
 * The contributions of many sources at one `now` (a batch of creates), each recurring pattern
 * projected once: a batch's schedules mostly share a few crons and zones. Contributions are
 * values: never mutated, so schedules may share one.
 */
export class LoadProjections {
  private readonly recurring = new Map<string, LoadContribution | null>();

  constructor(private readonly now: Date) {}

  of(source: LoadSource): LoadContribution | null {
    if (source.timing.kind === 'once') return projectLoad(source, this.now);
    const { priority, endAt, timing } = source;
    const key = [priority, timing.cron, timing.timezone, endAt?.getTime() ?? ''].join('\u0000');
    let contribution = this.recurring.get(key);
    if (contribution === undefined) {
      contribution = projectLoad(source, this.now);
      this.recurring.set(key, contribution);
    }
    return contribution;
  }
}

/**
 * A tenant's projected runs, for checks and reports: the next 24 hours minute by minute (UTC,
 * from `start`, a minute boundary), and the one-time runs of any later minute a check needs
 * (`later`, preloaded by the caller). Pure arithmetic over the profile; the caller reads it
 * under the tenant's profile lock and applies each accepted change to it, so the changes of a
 * batch are checked against each other too.
 */
export class LoadWindow {
  private readonly later = new Map<string, number>();

  constructor(
    readonly start: Date,
    /** What the tenant's dispatchRatePerSecond allows in a minute. */
    readonly allowedPerMinute: number,
    /** Recurring runs per minute of the window. */
    private readonly recurring: number[],
    /** One-time runs per minute of the window. */
    private readonly instants: number[],
  ) {}

  /** The window from a tenant's counters (see LOAD_WINDOW): each minute's sum. */
  static of(
    start: Date,
    allowedPerMinute: number,
    profile: {
      recurring: ReadonlyArray<{ period: 'minute' | 'hour' | 'day'; slot: number; runs: number }>;
      instants: ReadonlyArray<{ minute: Date; runs: number }>;
    },
  ): LoadWindow {
    const every = profile.recurring
      .filter((r) => r.period === 'minute')
      .reduce((sum, r) => sum + r.runs, 0);
    const hour = new Array<number>(60).fill(0);
    const day = new Array<number>(MINUTES_PER_DAY).fill(0);
    for (const r of profile.recurring) {
      if (r.period === 'hour') hour[r.slot] += r.runs;
      else if (r.period === 'day') day[r.slot] += r.runs;
    }
    const first = minuteOfDay(start);
    const recurring = Array.from({ length: MINUTES_PER_DAY }, (_, i) => {
      const m = (first + i) % MINUTES_PER_DAY;
      return every + hour[m % 60] + day[m];
    });
    const instants = new Array<number>(MINUTES_PER_DAY).fill(0);
    for (const { minute, runs } of profile.instants) {
      const i = Math.floor((minute.getTime() - start.getTime()) / MINUTE_MS);
      if (i >= 0 && i < MINUTES_PER_DAY) instants[i] += runs;
    }
    return new LoadWindow(start, allowedPerMinute, recurring, instants);
  }

  /** One-time runs already projected in a minute beyond the window. */
  knowLater(minute: string, runs: number): void {
    this.later.set(minute, runs);
  }

  /** Whether a one-time contribution falls beyond the window (its minute must be preloaded). */
  isLater(c: LoadContribution): boolean {
    return c.period === 'instant' && this.indexOf(c.minute) >= this.recurring.length;
  }

  add(c: LoadContribution, sign: 1 | -1 = 1): void {
    if (c.period === 'instant') {
      const i = this.indexOf(c.minute);
      if (i < 0) return;
      if (i < this.instants.length) this.instants[i] += sign * c.runs;
      else this.later.set(c.minute, (this.later.get(c.minute) ?? 0) + sign * c.runs);
      return;
    }
    for (const i of this.recurringMinutes(c)) this.recurring[i] += sign * c.runs;
  }

  /**
   * Where replacing `before` by `after` would leave a minute needing more runs than allowed,
   * and more than it needed before: the worst such minute (the earliest of equals), or null. A
   * change that only lowers a minute already over the limit (an edit, a lowered quota) is never
   * refused. Works on minute indices and builds one Date, for the answer: a batch of creates
   * checks every item against up to 1,440 minutes.
   */
  overloadBy(
    after: LoadContribution,
    before: LoadContribution | null = null,
  ): { minute: Date; runs: number } | null {
    const allowed = this.allowedPerMinute;
    let worstIndex = -1;
    let worstRuns = 0;
    const consider = (i: number, needs: number) => {
      const total = needs - (before ? this.contributesAt(before, i) : 0) + after.runs;
      if (total > allowed && total > needs && total > worstRuns) {
        worstIndex = i;
        worstRuns = total;
      }
    };
    if (after.period === 'instant') {
      const i = this.indexOf(after.minute);
      if (i >= 0) consider(i, this.runsAt(i));
    } else {
      for (const i of this.recurringMinutes(after))
        consider(i, this.recurring[i] + this.instants[i]);
    }
    return worstIndex < 0 ? null : { minute: this.minute(worstIndex), runs: worstRuns };
  }

  /** The `count` busiest minutes of the window, busiest first (ties: earliest first). */
  busiest(count: number): Array<{ minute: Date; runs: number }> {
    return this.recurring
      .map((runs, i) => ({ i, runs: runs + this.instants[i] }))
      .filter((m) => m.runs > 0)
      .sort((a, b) => b.runs - a.runs || a.i - b.i)
      .slice(0, count)
      .map(({ i, runs }) => ({ minute: this.minute(i), runs }));
  }

  /** What `c` adds to the minute at index `i` (beyond the window: the same minute of the day). */
  private contributesAt(c: LoadContribution, i: number): number {
    if (c.period === 'instant') return this.indexOf(c.minute) === i ? c.runs : 0;
    const slot = (minuteOfDay(this.start) + (i % MINUTES_PER_DAY)) % MINUTES_PER_DAY;
    switch (c.period) {
      case 'minute':
        return c.runs;
      case 'hour':
        return c.slots.includes(slot % 60) ? c.runs : 0;
      case 'day':
        return c.slots.includes(slot) ? c.runs : 0;
    }
  }

  /** All runs projected in the minute at index `i`, in the window or beyond it. */
  private runsAt(i: number): number {
    if (i < this.recurring.length) return this.recurring[i] + this.instants[i];
    // Beyond the window the recurring pattern repeats day by day.
    const later = this.later.get(this.minute(i).toISOString()) ?? 0;
    return this.recurring[i % MINUTES_PER_DAY] + later;
  }

  /** The window's indices a recurring contribution adds to, ascending. */
  private recurringMinutes(c: Exclude<LoadContribution, { period: 'instant' }>): readonly number[] {
    if (c.period === 'minute') return WINDOW_MINUTES;
    const first = minuteOfDay(this.start);
    const indices: number[] = [];
    if (c.period === 'hour') {
      for (const slot of c.slots) {
        for (let i = mod(slot - first, 60); i < MINUTES_PER_DAY; i += 60) indices.push(i);
      }
    } else {
      for (const slot of c.slots) indices.push(mod(slot - first, MINUTES_PER_DAY));
    }
    return indices.sort((a, b) => a - b);
  }

  /** Minutes from the window's start (negative: before it). */
  private indexOf(minute: string): number {
    return Math.floor((new Date(minute).getTime() - this.start.getTime()) / MINUTE_MS);
  }

  private minute(i: number): Date {
    return new Date(this.start.getTime() + i * MINUTE_MS);
  }
}

function minuteOfDay(at: Date): number {
  return Math.floor((at.getTime() % (MINUTES_PER_DAY * MINUTE_MS)) / MINUTE_MS);
}

function mod(n: number, m: number): number {
  return ((n % m) + m) % m;
}
