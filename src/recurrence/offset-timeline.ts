import type { OffsetFn } from './timezone';
import { HOUR_MS, SECOND_MS } from './wall-time';

/**
 * A zone's UTC offset as a piecewise-constant function, learned lazily from the zone data in
 * 6-hour slices: each slice's start offset is sampled once, and a slice whose two ends differ
 * gets its transition instant located once by binary search. After that every offset lookup is
 * arithmetic, which matters because a lookup through Intl costs tens of microseconds.
 *
 * Assumption: at most one offset change per 6-hour slice. Every transition in current tzdb data
 * is further apart than that.
 */
const SLICE_MS = 6 * HOUR_MS;
/** Per-zone cache size at which we start over; ~40 years of slices. */
const CACHE_LIMIT = 60_000;

interface ZoneCache {
  /** slice index -> offset at the slice's first instant */
  starts: Map<number, number>;
  /** slice index -> first instant (whole second) carrying the next slice's offset */
  transitions: Map<number, number>;
}

// Zone rules cannot change while the process runs, so what we learn is shared across calls.
const caches = new Map<string, ZoneCache>();

export class OffsetTimeline {
  private readonly cache: ZoneCache;

  constructor(
    timezone: string,
    private readonly raw: OffsetFn,
  ) {
    let cache = caches.get(timezone);
    if (!cache) {
      cache = { starts: new Map(), transitions: new Map() };
      caches.set(timezone, cache);
    }
    this.cache = cache;
  }

  /** UTC offset in ms at an instant. */
  offsetAt(instantMs: number): number {
    const slice = Math.floor(instantMs / SLICE_MS);
    const before = this.sliceStart(slice);
    const after = this.sliceStart(slice + 1);
    if (before === after) return before;
    return instantMs < this.transition(slice, after) ? before : after;
  }

  /** Distinct offsets in force at some instant in [fromMs, toMs], ascending. */
  offsetsBetween(fromMs: number, toMs: number): number[] {
    const seen = new Set<number>();
    const last = Math.floor(toMs / SLICE_MS);
    for (let slice = Math.floor(fromMs / SLICE_MS); slice <= last + 1; slice++) {
      seen.add(this.sliceStart(slice));
    }
    return [...seen].sort((a, b) => a - b);
  }

  private sliceStart(slice: number): number {
    const { starts } = this.cache;
    let offset = starts.get(slice);
    if (offset === undefined) {
      offset = this.raw(slice * SLICE_MS);
      if (starts.size >= CACHE_LIMIT) starts.clear();
      starts.set(slice, offset);
    }
    return offset;
  }

  private transition(slice: number, offsetAfter: number): number {
    const { transitions } = this.cache;
    let at = transitions.get(slice);
    if (at === undefined) {
      // tzdb transitions fall on whole seconds; search seconds for the first one showing
      // the later offset.
      let lo = (slice * SLICE_MS) / SECOND_MS;
      let hi = ((slice + 1) * SLICE_MS) / SECOND_MS;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (this.raw(mid * SECOND_MS) === offsetAfter) hi = mid;
        else lo = mid;
      }
      at = hi * SECOND_MS;
      if (transitions.size >= CACHE_LIMIT) transitions.clear();
      transitions.set(slice, at);
    }
    return at;
  }
}
