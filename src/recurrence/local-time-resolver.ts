import type { DstPolicy } from './types';
import type { OffsetTimeline } from './offset-timeline';
import { DAY_MS, floorToDay, SECOND_MS } from './wall-time';

/** An instant together with the zone's UTC offset at that instant (both in ms). */
export interface ZonedInstant {
  instant: number;
  offset: number;
}

/** How a local wall time maps onto the UTC timeline in a given zone. */
export type LocalResolution =
  | { kind: 'unique'; at: ZonedInstant }
  /** The wall time occurs more than once (fall-back overlap); ascending. */
  | { kind: 'repeated'; at: ZonedInstant[] }
  /** The wall time is skipped by a forward jump; `gapEnd` is the instant of that jump. */
  | { kind: 'gap'; gapEnd: ZonedInstant };

// Windows cover [day - 1d, day + 3d] around a wall time's day: every instant a wall time on
// that day can map to (|offset| <= 16h covers all tzdb offsets, LMT included), plus the extra
// reach recurrence.ts needs to decide that buffered instants are final.
const WINDOW_BEFORE_MS = DAY_MS;
const WINDOW_AFTER_MS = 3 * DAY_MS;
const CACHE_LIMIT = 4096;

export class LocalTimeResolver {
  private readonly windows = new Map<number, readonly number[]>();

  constructor(private readonly timeline: OffsetTimeline) {}

  /** Distinct offsets the zone uses around the day of `wall`, ascending. */
  nearbyOffsets(wall: number): readonly number[] {
    const day = floorToDay(wall);
    let offsets = this.windows.get(day);
    if (!offsets) {
      offsets = this.timeline.offsetsBetween(day - WINDOW_BEFORE_MS, day + WINDOW_AFTER_MS);
      if (this.windows.size >= CACHE_LIMIT) this.windows.clear();
      this.windows.set(day, offsets);
    }
    return offsets;
  }

  resolve(wall: number): LocalResolution {
    const offsets = this.nearbyOffsets(wall);
    if (offsets.length === 1) {
      return { kind: 'unique', at: { instant: wall - offsets[0], offset: offsets[0] } };
    }
    // An instant t shows wall time `wall` exactly when t = wall - offset(t); try each offset.
    // Larger offsets give earlier instants, so walk them in descending order.
    const at: ZonedInstant[] = [];
    for (let i = offsets.length - 1; i >= 0; i--) {
      const offset = offsets[i];
      if (this.timeline.offsetAt(wall - offset) === offset) {
        at.push({ instant: wall - offset, offset });
      }
    }
    if (at.length === 1) return { kind: 'unique', at: at[0] };
    if (at.length > 1) return { kind: 'repeated', at };
    const gapEnd = this.gapEnd(wall, offsets);
    return { kind: 'gap', gapEnd: { instant: gapEnd, offset: this.timeline.offsetAt(gapEnd) } };
  }

  /**
   * First instant whose wall clock reads later than `wall`, i.e. the moment the clock jumped
   * over it. The wall clock only moves forward between transitions, so a binary search over
   * [wall - max offset, wall - min offset] finds it; tzdb transitions are on whole seconds.
   */
  private gapEnd(wall: number, offsets: readonly number[]): number {
    const isPast = (sec: number) =>
      sec * SECOND_MS + this.timeline.offsetAt(sec * SECOND_MS) > wall;
    let lo = Math.floor((wall - offsets[offsets.length - 1]) / SECOND_MS);
    let hi = Math.ceil((wall - offsets[0]) / SECOND_MS);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (isPast(mid)) hi = mid;
      else lo = mid;
    }
    return hi * SECOND_MS;
  }
}

/** Applies the schedule's DST policy: which instants (0, 1 or 2) a matching wall time yields. */
export function applyDstPolicy(resolution: LocalResolution, policy: DstPolicy): ZonedInstant[] {
  switch (resolution.kind) {
    case 'unique':
      return [resolution.at];
    case 'repeated': {
      const { at } = resolution;
      if (policy.repeated === 'both') return at;
      return [policy.repeated === 'first' ? at[0] : at[at.length - 1]];
    }
    case 'gap':
      // shift_forward runs at the instant the gap ends (the transition itself) rather than
      // "nominal time + gap length": that is the earliest moment the intended local time has
      // passed, and it sends every gap time to one instant, so `*/15 2 * * *` yields one
      // catch-up run instead of a burst colliding with the regular 03:xx runs.
      return policy.nonexistent === 'shift_forward' ? [resolution.gapEnd] : [];
  }
}
