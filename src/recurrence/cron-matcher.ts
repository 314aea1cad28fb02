import type { ParsedCron } from './cron-expression';
import { DAY_MS, dayOfWeek, daysInMonth, SECOND_MS, wallMs } from './wall-time';

/**
 * Finds matching local wall times field by field (month, then day, hour, minute, second), so
 * non-matching months/days/hours are skipped in one step each instead of minute by minute.
 */
export class CronMatcher {
  private readonly nextSecond: Int8Array;
  private readonly nextMinute: Int8Array;
  private readonly nextHour: Int8Array;
  private readonly nextMonth: Int8Array;
  private readonly domSet: Uint8Array;
  private readonly dowSet: Uint8Array;
  private readonly eitherDayField: boolean;

  /** `excludedDays`: wall days (wall ms / DAY_MS) on which nothing matches (excludeDates). */
  constructor(
    private readonly cron: ParsedCron,
    private readonly excludedDays: ReadonlySet<number> = new Set(),
  ) {
    this.nextSecond = nextTable(cron.seconds, 59);
    this.nextMinute = nextTable(cron.minutes, 59);
    this.nextHour = nextTable(cron.hours, 23);
    this.nextMonth = nextTable(cron.months, 12);
    this.domSet = membership(cron.daysOfMonth, 31);
    this.dowSet = membership(cron.daysOfWeek, 6);
    this.eitherDayField = cron.dayOfMonthRestricted && cron.dayOfWeekRestricted;
  }

  dayMatches(y: number, mo: number, d: number): boolean {
    const domOk = this.domSet[d] === 1 || this.monthDayMatches(y, mo, d);
    const weekday = dayOfWeek(y, mo, d);
    const dowOk = this.dowSet[weekday] === 1 || this.weekdayOfMonthMatches(y, mo, d, weekday);
    // Vixie rule: two restricted day fields widen the match (OR); otherwise the unrestricted
    // one is a full set and AND reduces to the restricted one.
    return this.eitherDayField ? domOk || dowOk : domOk && dowOk;
  }

  /** `L`, `L-n`, `nW`, `LW`: day-of-month forms that depend on the month's length. */
  private monthDayMatches(y: number, mo: number, d: number): boolean {
    const { fromLast, nearestWeekday, lastWeekday } = this.cron.monthDays;
    if (fromLast.length === 0 && nearestWeekday.length === 0 && !lastWeekday) return false;
    const length = daysInMonth(y, mo);
    // L-n before the 1st (L-30 in February) matches no day, as in Quartz.
    if (fromLast.some((n) => length - n === d)) return true;
    if (lastWeekday && nearestWeekdayOf(y, mo, length, length) === d) return true;
    return nearestWeekday.some(
      (day) => day <= length && nearestWeekdayOf(y, mo, day, length) === d,
    );
  }

  /** `dL` (last weekday d of the month) and `d#n` (its nth): forms that depend on the month. */
  private weekdayOfMonthMatches(y: number, mo: number, d: number, weekday: number): boolean {
    const { nth, last } = this.cron.weekdaysOfMonth;
    if (last.includes(weekday) && d + 7 > daysInMonth(y, mo)) return true;
    const week = Math.ceil(d / 7);
    return nth.some((rule) => rule.weekday === weekday && rule.nth === week);
  }

  /**
   * Smallest matching wall time >= `fromWall` (rounded up to a whole second), or null if there
   * is none at or before `limitWall`. Terminates because every pass moves the cursor forward
   * and the limit is checked on each pass.
   */
  next(fromWall: number, limitWall: number): number | null {
    // Also rejects NaN, which would otherwise never compare past the limit.
    if (!(fromWall <= limitWall)) return null;
    const start = new Date(Math.ceil(fromWall / SECOND_MS) * SECOND_MS);
    let y = start.getUTCFullYear();
    let mo = start.getUTCMonth() + 1;
    let d = start.getUTCDate();
    let h = start.getUTCHours();
    let mi = start.getUTCMinutes();
    let s = start.getUTCSeconds();

    for (;;) {
      if (s > 59) [s, mi] = [0, mi + 1];
      if (mi > 59) [mi, h] = [0, h + 1];
      if (h > 23) [h, d] = [0, d + 1];
      if (d > daysInMonth(y, mo)) [d, mo, h, mi, s] = [1, mo + 1, 0, 0, 0];
      if (mo > 12) [mo, y] = [1, y + 1];
      if (wallMs(y, mo, d) > limitWall) return null;

      const m = this.nextMonth[mo];
      if (m !== mo) {
        if (m === -1) [y, mo] = [y + 1, this.cron.months[0]];
        else mo = m;
        [d, h, mi, s] = [1, 0, 0, 0];
        continue;
      }
      if (!this.dayMatches(y, mo, d) || this.excludedDays.has(wallMs(y, mo, d) / DAY_MS)) {
        [d, h, mi, s] = [d + 1, 0, 0, 0];
        continue;
      }
      const hh = this.nextHour[h];
      if (hh === -1) {
        [d, h, mi, s] = [d + 1, 0, 0, 0];
        continue;
      }
      if (hh !== h) [h, mi, s] = [hh, 0, 0];
      const mm = this.nextMinute[mi];
      if (mm === -1) {
        [h, mi, s] = [h + 1, 0, 0];
        continue;
      }
      if (mm !== mi) [mi, s] = [mm, 0];
      const ss = this.nextSecond[s];
      if (ss === -1) {
        [mi, s] = [mi + 1, 0];
        continue;
      }
      const result = wallMs(y, mo, d, h, mi, ss);
      return result > limitWall ? null : result;
    }
  }
}

/**
 * Quartz's `nW`: the day itself when it is Monday-Friday; a Saturday moves to the Friday before
 * and a Sunday to the Monday after, except that the move never leaves the month (a Saturday 1st
 * moves to Monday the 3rd, a Sunday last day to the Friday before). A day past the month's end
 * (31W in April) matches nothing.
 */
function nearestWeekdayOf(y: number, mo: number, day: number, length: number): number {
  const weekday = dayOfWeek(y, mo, day);
  if (weekday === 6) return day === 1 ? 3 : day - 1;
  if (weekday === 0) return day === length ? day - 2 : day + 1;
  return day;
}

/** table[x] = smallest allowed value >= x, or -1 when there is none. */
function nextTable(values: readonly number[], max: number): Int8Array {
  const table = new Int8Array(max + 2).fill(-1);
  let next = -1;
  const allowed = membership(values, max);
  for (let x = max; x >= 0; x--) {
    if (allowed[x]) next = x;
    table[x] = next;
  }
  return table;
}

function membership(values: readonly number[], max: number): Uint8Array {
  const set = new Uint8Array(max + 1);
  for (const v of values) set[v] = 1;
  return set;
}
