/** Offsets and local times from the browser's own time zone data (Intl), never guessed. */

const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/** The zone's UTC offset at an instant, in minutes (Berlin in summer: 120). */
export function offsetMinutes(timezone: string, at: Date): number {
  let format = offsetFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: timezone, timeZoneName: 'longOffset' });
    offsetFormats.set(timezone, format);
  }
  const name = format.formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  const match = /GMT([+-])(\d\d):?(\d\d)?/.exec(name);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3] ?? 0);
  return match[1] === '-' ? -minutes : minutes;
}

export function formatLocal(timezone: string, at: Date): string {
  return new Intl.DateTimeFormat('sv-SE', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hour12: false,
  })
    .format(at)
    .replace(' ', ' ');
}

export function formatUtc(iso: string | null | undefined): string {
  if (!iso) return '–';
  return iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC');
}

export function formatOffset(minutes: number): string {
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A DST change between two consecutive instants of a schedule. */
export interface DstChange {
  /** the first instant with the new offset */
  at: Date;
  from: number;
  to: number;
  /** clocks jump forward (a gap: some local times do not exist) or back (a fold: they repeat) */
  kind: 'gap' | 'fold';
}

const DAY_MS = 86_400_000;
/** Samples per interval when looking for offset changes: daily up to a bit over a year. */
const MAX_SAMPLES = 400;

/**
 * Every offset change between `a` and `b` (DST gaps and folds), each found by bisection to the
 * second. The interval is sampled daily (at most MAX_SAMPLES samples) so that changes are found
 * even when the offset is the same at both ends (instants a year apart). The zone data is the
 * browser's own.
 */
export function dstChangesBetween(timezone: string, a: Date, b: Date): DstChange[] {
  const start = a.getTime();
  const end = b.getTime();
  if (end <= start) return [];
  const step = Math.max(DAY_MS / 4, Math.ceil((end - start) / MAX_SAMPLES));
  const changes: DstChange[] = [];
  let lo = start;
  let loOffset = offsetMinutes(timezone, a);
  while (lo < end) {
    const next = Math.min(lo + step, end);
    const nextOffset = offsetMinutes(timezone, new Date(next));
    if (nextOffset !== loOffset) changes.push(bisect(timezone, lo, next, loOffset, nextOffset));
    lo = next;
    loOffset = nextOffset;
  }
  return changes;
}

function bisect(
  timezone: string,
  from: number,
  to: number,
  before: number,
  after: number,
): DstChange {
  let lo = from;
  let hi = to;
  while (hi - lo > 1000) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMinutes(timezone, new Date(mid)) === before) lo = mid;
    else hi = mid;
  }
  return { at: new Date(hi), from: before, to: after, kind: after > before ? 'gap' : 'fold' };
}

/** "DST gap on 2027-03-28: clocks go forward 60 min, 02:00 → 03:00 (+01:00 → +02:00); …" */
export function describeDstChange(change: DstChange): string {
  const shift = Math.abs(change.to - change.from);
  // The wall clock just before and just after the change: the instant read in each offset.
  const wall = (offset: number) =>
    new Date(change.at.getTime() + offset * 60_000).toISOString().slice(0, 16).split('T');
  const [day, before] = wall(change.from);
  const [, after] = wall(change.to);
  const offsets = `(${formatOffset(change.from)} → ${formatOffset(change.to)})`;
  return change.kind === 'gap'
    ? `DST gap on ${day}: clocks go forward ${shift} min, ${before} → ${after} ${offsets}; local times in between do not exist`
    : `DST fold on ${day}: clocks go back ${shift} min, ${before} → ${after} ${offsets}; local times in between happen twice`;
}

export function timezones(): string[] {
  const supported = (Intl as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;
  return supported ? supported('timeZone') : ['UTC'];
}

export function ago(seconds: number): string {
  if (seconds < 60) return `${Math.round(seconds)} s`;
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`;
  if (seconds < 86400) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}
