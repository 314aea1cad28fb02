/**
 * Local wall-clock times are handled as "wall milliseconds": the wall clock's calendar fields
 * encoded as if they were UTC. That gives plain arithmetic and ordering over local calendar time
 * without consulting any zone; a zone is only needed to turn a wall time into an instant.
 */

export const SECOND_MS = 1000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export function wallMs(y: number, mo: number, d: number, h = 0, mi = 0, s = 0): number {
  if (y >= 100) return Date.UTC(y, mo - 1, d, h, mi, s);
  // Date.UTC maps years 0-99 to 1900-1999, so set the year explicitly.
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

const MONTH_LENGTHS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function daysInMonth(y: number, mo: number): number {
  if (mo !== 2) return MONTH_LENGTHS[mo - 1];
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
}

/** 0 = Sunday. 1970-01-01 (day 0 of the epoch) was a Thursday. */
export function dayOfWeek(y: number, mo: number, d: number): number {
  const epochDay = Math.floor(wallMs(y, mo, d) / DAY_MS);
  return (((epochDay + 4) % 7) + 7) % 7;
}

export function floorToDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

const pad2 = (n: number) => (n < 10 ? '0' : '') + n;

/** ISO-8601 local date-time with offset, seconds included, milliseconds dropped. */
export function formatLocalIso(instantMs: number, offsetMs: number): string {
  const wall = Math.floor((instantMs + offsetMs) / SECOND_MS) * SECOND_MS;
  // toISOString renders the wall fields (encoded as UTC) as 'YYYY-MM-DDTHH:mm:ss.sssZ'.
  const local = new Date(wall).toISOString().slice(0, -5);
  const totalSeconds = Math.round(Math.abs(offsetMs) / SECOND_MS);
  const sign = offsetMs < 0 ? '-' : '+';
  const hours = pad2(Math.floor(totalSeconds / 3600));
  const minutes = pad2(Math.floor((totalSeconds % 3600) / 60));
  const seconds = totalSeconds % 60;
  // Only pre-1900 local mean times have second-level offsets; keep them rather than lie.
  return `${local}${sign}${hours}:${minutes}${seconds ? ':' + pad2(seconds) : ''}`;
}
