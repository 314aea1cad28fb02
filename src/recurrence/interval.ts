import type { LocalTimeResolver } from './local-time-resolver';
import type { OffsetTimeline } from './offset-timeline';
import type { Occurrence } from './types';
import { DAY_MS, floorToDay, formatLocalIso } from './wall-time';

/**
 * Instants anchor + k * every (k >= 0) within [fromMs, toMs], ascending. Time is absolute here:
 * an interval is a duration, so DST never stretches or shrinks it; the zone only decides local
 * times and which instants fall on an excluded local date. An excluded date is stepped over in
 * one jump (to the first instant at or after that date's end), so a one-second interval over a
 * year of holidays costs one step per holiday, not one per second. Gives up once `horizonMs`
 * passes without an instant (every remaining date excluded).
 */
export function* intervalOccurrences(
  anchorMs: number,
  everyMs: number,
  timeline: OffsetTimeline,
  resolver: LocalTimeResolver,
  excludedDays: ReadonlySet<number>,
  fromMs: number,
  toMs: number,
  horizonMs: number,
): Generator<Occurrence> {
  let k = Math.max(0, Math.ceil((fromMs - anchorMs) / everyMs));
  let lastFound = fromMs;
  for (;;) {
    const instant = anchorMs + k * everyMs;
    if (instant > toMs || instant - lastFound > horizonMs) return;
    const offset = timeline.offsetAt(instant);
    const wallDay = floorToDay(instant + offset);
    if (!excludedDays.has(wallDay / DAY_MS)) {
      lastFound = instant;
      yield { at: new Date(instant), local: formatLocalIso(instant, offset) };
      k++;
      continue;
    }
    // The next local midnight is at least (next wall day - largest nearby offset): jumping
    // there never passes a permitted instant, and k always moves on.
    const offsets = resolver.nearbyOffsets(wallDay);
    const nextDayStart = wallDay + DAY_MS - offsets[offsets.length - 1];
    k = Math.max(k + 1, Math.ceil((nextDayStart - anchorMs) / everyMs));
  }
}
