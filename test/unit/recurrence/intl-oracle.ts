/**
 * Test-only reference implementation built on Intl.DateTimeFormat and nothing from the engine
 * (no luxon, no engine helpers): it reads the zone's wall clock minute by minute across a UTC
 * window and derives what each DST policy must produce by brute force.
 */
import type { DstPolicy } from '../../../src/recurrence';

export interface Wall {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
  /** 0 = Sunday */
  dow: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Wall clock fields in `timeZone` at `atMs`, plus the wall clock encoded as UTC millis. */
export function intlWall(atMs: number, timeZone: string): { wall: Wall; wallMs: number } {
  const parts: Record<string, string> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(atMs))) parts[p.type] = p.value;
  const y = parts.era === 'BC' ? 1 - Number(parts.year) : Number(parts.year);
  const [mo, d, h, mi, s] = ['month', 'day', 'hour', 'minute', 'second'].map((k) =>
    Number(parts[k]),
  );
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return { wall: { y, mo, d, h, mi, s, dow: date.getUTCDay() }, wallMs: date.getTime() };
}

const p2 = (n: number) => String(n).padStart(2, '0');

function localIso(wall: Wall, offsetMs: number): string {
  const offsetMin = Math.round(offsetMs / 60000);
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  return (
    `${String(wall.y).padStart(4, '0')}-${p2(wall.mo)}-${p2(wall.d)}` +
    `T${p2(wall.h)}:${p2(wall.mi)}:${p2(wall.s)}${sign}${p2(Math.floor(abs / 60))}:${p2(abs % 60)}`
  );
}

/** 'YYYY-MM-DDTHH:mm:ss±HH:MM' for `at` in `timeZone`, via Intl only. */
export function intlLocalIso(at: Date, timeZone: string): string {
  const atMs = Math.floor(at.getTime() / 1000) * 1000;
  const { wall, wallMs } = intlWall(atMs, timeZone);
  return localIso(wall, wallMs - atMs);
}

interface Scan {
  instants: number[];
  walls: Wall[];
  wallMs: number[];
  indexOf: Map<number, number>;
  /** Every wall time some scanned instant displays. */
  displayed: Set<number>;
  /** Forward jumps of the wall clock: (wall before, wall after, instant of the jump). */
  jumps: { before: number; after: number; at: number }[];
}
const scans = new Map<string, Scan>();

/** Wall clock every `stepMs` across [fromMs, toMs]; cached per zone and window. */
function scan(timeZone: string, fromMs: number, toMs: number, stepMs: number): Scan {
  const key = `${timeZone}|${fromMs}|${toMs}|${stepMs}`;
  let result = scans.get(key);
  if (!result) {
    const instants: number[] = [];
    const walls: Wall[] = [];
    const wallMs: number[] = [];
    for (let t = fromMs; t <= toMs; t += stepMs) {
      const read = intlWall(t, timeZone);
      instants.push(t);
      walls.push(read.wall);
      wallMs.push(read.wallMs);
    }
    const jumps: Scan['jumps'] = [];
    for (let i = 1; i < instants.length; i++) {
      if (wallMs[i] - wallMs[i - 1] > stepMs) {
        jumps.push({ before: wallMs[i - 1], after: wallMs[i], at: instants[i] });
      }
    }
    result = {
      instants,
      walls,
      wallMs,
      indexOf: new Map(instants.map((t, i) => [t, i])),
      displayed: new Set(wallMs),
      jumps,
    };
    scans.set(key, result);
  }
  return result;
}

const DAY = 86_400_000;

function wallFields(w: number): Wall {
  const d = new Date(w);
  return {
    y: d.getUTCFullYear(),
    mo: d.getUTCMonth() + 1,
    d: d.getUTCDate(),
    h: d.getUTCHours(),
    mi: d.getUTCMinutes(),
    s: d.getUTCSeconds(),
    dow: d.getUTCDay(),
  };
}

/**
 * Expected occurrences in (fromMs, toMs] for a schedule whose local-time match is `matches`,
 * as 'UTC-ISO local-ISO' strings.
 * Exact when the schedule's times, the zone's offsets and its transitions all sit on the
 * `stepMs` grid (e.g. 5 minutes for schedules on multiples of 5 minutes in modern zones).
 * The scan extends a day beyond the window on each side, more than any offset, so every wall
 * time that could map into the window is seen.
 */
export function bruteForce(
  timeZone: string,
  matches: (w: Wall) => boolean,
  policy: DstPolicy,
  fromMs: number,
  toMs: number,
  stepMs = 60_000,
): string[] {
  const { instants, walls, wallMs, indexOf, displayed, jumps } = scan(
    timeZone,
    fromMs - DAY,
    toMs + DAY,
    stepMs,
  );

  // Each matching wall time, with every instant that displays it (ascending).
  const byWall = new Map<number, number[]>();
  instants.forEach((t, i) => {
    if (!matches(walls[i])) return;
    const list = byWall.get(wallMs[i]) ?? [];
    list.push(t);
    byWall.set(wallMs[i], list);
  });

  const results = new Set<number>();
  for (const list of byWall.values()) {
    if (policy.repeated === 'both') list.forEach((t) => results.add(t));
    else results.add(policy.repeated === 'first' ? list[0] : list[list.length - 1]);
  }

  // Matching wall times that the clock jumped over and never displays: shift_forward runs
  // them at the jump.
  if (policy.nonexistent === 'shift_forward') {
    for (const { before, after, at } of jumps) {
      for (let w = before + stepMs; w < after; w += stepMs) {
        if (!displayed.has(w) && matches(wallFields(w))) results.add(at);
      }
    }
  }

  return [...results]
    .filter((t) => t > fromMs && t <= toMs)
    .sort((a, b) => a - b)
    .map((t) => {
      const i = indexOf.get(t)!;
      return `${new Date(t).toISOString()} ${localIso(walls[i], wallMs[i] - t)}`;
    });
}
