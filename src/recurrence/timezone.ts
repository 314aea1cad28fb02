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

export function zoneOffsetFn(timezone: string): OffsetFn {
  assertValidTimezone(timezone);
  const zone = IANAZone.create(timezone);
  // luxon reports minutes, derived from whole-second wall readings; round away float noise.
  return (instantMs) => Math.round(zone.offset(instantMs) * 60_000);
}

/** ISO-8601 wall time with offset (seconds, no milliseconds) of `at` in `timezone`. */
export function toLocalIso(at: Date, timezone: string): string {
  const ms = at.getTime();
  if (Number.isNaN(ms)) throw new RangeError('toLocalIso: invalid Date');
  return formatLocalIso(ms, zoneOffsetFn(timezone)(ms));
}
