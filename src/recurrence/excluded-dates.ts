import { DAY_MS, wallMs } from './wall-time';

const LOCAL_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** True for a real calendar date written YYYY-MM-DD (2027-02-30 is not one). */
export function isLocalDate(text: unknown): text is string {
  if (typeof text !== 'string') return false;
  const match = LOCAL_DATE.exec(text);
  if (!match) return false;
  const [y, mo, d] = match.slice(1).map(Number);
  if (y < 1 || mo < 1 || mo > 12 || d < 1) return false;
  return new Date(wallMs(y, mo, d)).getUTCDate() === d;
}

/** Excluded local dates as wall days (wall ms / DAY_MS); a malformed date is a RangeError. */
export function excludedWallDays(dates: readonly string[] | undefined): ReadonlySet<number> {
  const days = new Set<number>();
  for (const date of dates ?? []) {
    if (!isLocalDate(date)) throw new RangeError(`excluded date "${date}" is not YYYY-MM-DD`);
    const [y, mo, d] = date.split('-').map(Number);
    days.add(wallMs(y, mo, d) / DAY_MS);
  }
  return days;
}
