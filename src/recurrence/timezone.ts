import { IANAZone } from 'luxon';
import { InvalidTimezoneError } from './errors';
import { formatLocalIso } from './wall-time';

// Things Intl (or luxon's own zone parsing) might accept that are not IANA zones: a schedule
// must follow a region's rules, so fixed offsets and the host's zone are refused. The Etc/*
// names (Etc/UTC, Etc/GMT+5, ...) are real IANA zones and stay allowed.
const NOT_IANA = /^(local|system|default)$|^[+-]|^(UTC|GMT|UT)\s*[+-]/i;

const validity = new Map<string, boolean>();

/** True for IANA zone names (including UTC and Etc/*), false for offsets, "local" and junk. */
export function isValidTimezone(name: unknown): name is string {
  if (typeof name !== 'string' || name === '' || name !== name.trim()) return false;
  if (NOT_IANA.test(name)) return false;
  // luxon builds a fresh Intl.DateTimeFormat per check (~0.1-0.5 ms), so remember answers.
  let valid = validity.get(name);
  if (valid === undefined) {
    valid = IANAZone.isValidZone(name);
    if (validity.size >= 1000) validity.clear();
    validity.set(name, valid);
  }
  return valid;
}

export function assertValidTimezone(name: string): void {
  if (!isValidTimezone(name)) throw new InvalidTimezoneError(name);
}

/** The zone's UTC offset (in ms, positive east of Greenwich) at an instant. */
export type OffsetFn = (instantMs: number) => number;

/** Zones whose offset has always been 0: no rules to consult. */
const ALWAYS_UTC = new Set(['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT']);

/**
 * Each zone's last answer. A zone's offset costs luxon an Intl formatting (about 10 us), and a
 * dispatch asks it for every run of a batch, most of them at one instant (a flood, a crowded
 * minute): the same instant in the same zone is answered once. Exact, since it is keyed by the
 * instant itself; bounded by the number of zones.
 */
const lastOffsets = new Map<string, { instantMs: number; offsetMs: number }>();

export function zoneOffsetFn(timezone: string): OffsetFn {
  assertValidTimezone(timezone);
  if (ALWAYS_UTC.has(timezone)) return () => 0;
  const zone = IANAZone.create(timezone);
  return (instantMs) => {
    const last = lastOffsets.get(timezone);
    if (last?.instantMs === instantMs) return last.offsetMs;
    // luxon reports minutes, derived from whole-second wall readings; round away float noise.
    const offsetMs = Math.round(zone.offset(instantMs) * 60_000);
    lastOffsets.set(timezone, { instantMs, offsetMs });
    return offsetMs;
  };
}

/** ISO-8601 wall time with offset (seconds, no milliseconds) of `at` in `timezone`. */
export function toLocalIso(at: Date, timezone: string): string {
  const ms = at.getTime();
  if (Number.isNaN(ms)) throw new RangeError('toLocalIso: invalid Date');
  return formatLocalIso(ms, zoneOffsetFn(timezone)(ms));
}
