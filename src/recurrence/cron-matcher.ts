import type { ParsedCron } from './cron-expression';
import { dayOfWeek, daysInMonth, SECOND_MS, wallMs } from './wall-time';

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

  constructor(private readonly cron: ParsedCron) {
    this.nextSecond = nextTable(cron.seconds, 59);
    this.nextMinute = nextTable(cron.minutes, 59);
    this.nextHour = nextTable(cron.hours, 23);
    this.nextMonth = nextTable(cron.months, 12);
    this.domSet = membership(cron.daysOfMonth, 31);
    this.dowSet = membership(cron.daysOfWeek, 6);
    this.eitherDayField = cron.dayOfMonthRestricted && cron.dayOfWeekRestricted;
  }

  dayMatches(y: number, mo: number, d: number): boolean {
    const domOk = this.domSet[d] === 1;
    const dowOk = this.dowSet[dayOfWeek(y, mo, d)] === 1;
    // Vixie rule: two restricted day fields widen the match (OR); otherwise the unrestricted
    // one is a full set and AND reduces to the restricted one.
    return this.eitherDayField ? domOk || dowOk : domOk && dowOk;
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
      if (!this.dayMatches(y, mo, d)) {
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
