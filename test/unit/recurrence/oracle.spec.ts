/**
 * Cross-checks the engine against a brute-force reference (intl-oracle.ts) that scans every
 * UTC minute with Intl.DateTimeFormat, for many zones, schedules and all six DST policies.
 * The schedules are given twice: as cron text for the engine and as a plain predicate for the
 * oracle, so no parsing or matching code is shared.
 */
import {
  occurrencesBetween,
  type DstPolicy,
  type NonexistentPolicy,
  type RepeatedPolicy,
} from '../../../src/recurrence';
import { bruteForce, type Wall } from './intl-oracle';

interface Window {
  zone: string;
  /** What happens inside the window (for the test name). */
  note: string;
  from: string;
  to: string;
}

const windows: Window[] = [
  {
    zone: 'America/New_York',
    note: 'spring gap',
    from: '2027-03-13T00:00Z',
    to: '2027-03-16T00:00Z',
  },
  {
    zone: 'America/New_York',
    note: 'fall overlap',
    from: '2027-11-06T00:00Z',
    to: '2027-11-09T00:00Z',
  },
  { zone: 'Europe/London', note: 'spring gap', from: '2027-03-27T00:00Z', to: '2027-03-30T00:00Z' },
  {
    zone: 'Europe/London',
    note: 'autumn overlap',
    from: '2027-10-30T00:00Z',
    to: '2027-11-02T00:00Z',
  },
  {
    zone: 'Australia/Lord_Howe',
    note: '30-min overlap',
    from: '2027-04-02T00:00Z',
    to: '2027-04-05T00:00Z',
  },
  {
    zone: 'Australia/Lord_Howe',
    note: '30-min gap',
    from: '2027-10-01T00:00Z',
    to: '2027-10-04T00:00Z',
  },
  { zone: 'Pacific/Apia', note: 'missing day', from: '2011-12-28T00:00Z', to: '2012-01-01T00:00Z' },
  {
    zone: 'Pacific/Apia',
    note: 'DST start 2011',
    from: '2011-09-23T00:00Z',
    to: '2011-09-26T00:00Z',
  },
  {
    zone: 'America/Sao_Paulo',
    note: 'midnight gap 2018',
    from: '2018-11-03T00:00Z',
    to: '2018-11-06T00:00Z',
  },
  {
    zone: 'Antarctica/Troll',
    note: '2-hour gap',
    from: '2027-03-27T00:00Z',
    to: '2027-03-30T00:00Z',
  },
  {
    zone: 'Pacific/Chatham',
    note: '+12:45 overlap',
    from: '2027-04-02T00:00Z',
    to: '2027-04-05T00:00Z',
  },
  {
    zone: 'Africa/Casablanca',
    note: 'Ramadan change',
    from: '2024-03-09T00:00Z',
    to: '2024-03-12T00:00Z',
  },
  { zone: 'Asia/Kolkata', note: 'no DST', from: '2027-03-13T00:00Z', to: '2027-03-15T00:00Z' },
];

// Every schedule below fires on multiples of 5 minutes, and every zone/transition here is on
// the 5-minute grid, so a 5-minute scan is exact and 5x cheaper than a per-minute one.
const FIVE_MINUTES = 300_000;

interface Schedule {
  cron: string;
  matches: (w: Wall) => boolean;
}

const schedules: Schedule[] = [
  { cron: '30 2 * * *', matches: (w) => w.h === 2 && w.mi === 30 },
  { cron: '30 1 * * *', matches: (w) => w.h === 1 && w.mi === 30 },
  { cron: '0 0 * * *', matches: (w) => w.h === 0 && w.mi === 0 },
  { cron: '0 12 * * *', matches: (w) => w.h === 12 && w.mi === 0 },
  { cron: '*/20 * * * *', matches: (w) => w.mi % 20 === 0 },
  { cron: '15,45 0-3 * * *', matches: (w) => (w.mi === 15 || w.mi === 45) && w.h <= 3 },
  { cron: '0 */2 * * SAT,SUN', matches: (w) => w.mi === 0 && w.h % 2 === 0 && w.dow % 6 === 0 },
];

const policies: DstPolicy[] = (['skip', 'shift_forward'] as NonexistentPolicy[]).flatMap(
  (nonexistent) =>
    (['first', 'last', 'both'] as RepeatedPolicy[]).map((repeated) => ({ nonexistent, repeated })),
);

const cases = windows.flatMap((w) =>
  schedules.flatMap((s) => policies.map((p) => ({ ...w, ...s, policy: p }))),
);

describe('occurrencesBetween agrees with a brute-force Intl scan', () => {
  it.each(cases)(
    '$zone ($note) "$cron" $policy.nonexistent/$policy.repeated',
    ({ zone, from, to, cron, matches, policy }) => {
      const fromDate = new Date(from);
      const toDate = new Date(to);
      const expected = bruteForce(
        zone,
        matches,
        policy,
        fromDate.getTime(),
        toDate.getTime(),
        FIVE_MINUTES,
      );
      const { occurrences, truncated } = occurrencesBetween(
        { cron, timezone: zone, dstPolicy: policy },
        fromDate,
        toDate,
        10_000,
      );
      expect(truncated).toBe(false);
      expect(occurrences.map((o) => `${o.at.toISOString()} ${o.local}`)).toEqual(expected);
    },
  );
});
