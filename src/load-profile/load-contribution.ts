import { parseCron, zoneOffsetFn } from '../recurrence';
import type { RunPriority } from '../run-vocabulary';

const MINUTE_MS = 60_000;
export const MINUTES_PER_DAY = 1440;

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
   * and more than it needed before: the worst such minute, or null. A change that only lowers
   * a minute already over the limit (an edit, a lowered quota) is never refused.
   */
  overloadBy(
    after: LoadContribution,
    before: LoadContribution | null = null,
  ): { minute: Date; runs: number } | null {
    const allowed = this.allowedPerMinute;
    let worst: { minute: Date; runs: number } | null = null;
    for (const { minute, runs, from } of this.minutesOf(after)) {
      const previous = before ? this.contributes(before, minute) : 0;
      const total = runs - previous + from;
      if (total > allowed && total > runs && (!worst || total > worst.runs)) {
        worst = { minute, runs: total };
      }
    }
    return worst;
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

  /** The minutes `c` adds to, with what each needs now and what `c` adds there. */
  private minutesOf(c: LoadContribution): Array<{ minute: Date; runs: number; from: number }> {
    if (c.period === 'instant') {
      const i = this.indexOf(c.minute);
      if (i < 0) return [];
      const minute = new Date(c.minute);
      return [{ minute, runs: this.runsAt(minute), from: c.runs }];
    }
    return this.recurringMinutes(c).map((i) => ({
      minute: this.minute(i),
      runs: this.recurring[i] + this.instants[i],
      from: c.runs,
    }));
  }

  /** What `c` adds to one minute. */
  private contributes(c: LoadContribution, minute: Date): number {
    if (c.period === 'instant') return c.minute === minute.toISOString() ? c.runs : 0;
    const i = this.indexOf(minute.toISOString()) % MINUTES_PER_DAY;
    return this.recurringMinutes(c).includes(i) ? c.runs : 0;
  }

  /** All runs projected in a minute, in the window or beyond it. */
  private runsAt(minute: Date): number {
    const i = this.indexOf(minute.toISOString());
    if (i < this.recurring.length) return this.recurring[i] + this.instants[i];
    // Beyond the window the recurring pattern repeats day by day.
    return this.recurring[i % MINUTES_PER_DAY] + (this.later.get(minute.toISOString()) ?? 0);
  }

  /** The window's indices a recurring contribution adds to. */
  private recurringMinutes(c: Exclude<LoadContribution, { period: 'instant' }>): number[] {
    const first = minuteOfDay(this.start);
    const all = this.recurring.map((_, i) => i);
    switch (c.period) {
      case 'minute':
        return all;
      case 'hour': {
        const slots = new Set(c.slots);
        return all.filter((i) => slots.has((first + i) % 60));
      }
      case 'day': {
        const slots = new Set(c.slots);
        return all.filter((i) => slots.has((first + i) % MINUTES_PER_DAY));
      }
    }
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
