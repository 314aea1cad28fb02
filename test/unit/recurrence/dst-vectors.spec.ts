/**
 * Hand-computed vectors. Every expected instant is written out literally from the zone's known
 * offsets (stated next to each case), never produced by the code under test; each returned
 * `local` string is additionally cross-checked against Intl.DateTimeFormat.
 */
import {
  nextOccurrences,
  type DstPolicy,
  type Occurrence,
  type RecurrenceSpec,
} from '../../../src/recurrence';
import { intlLocalIso } from './intl-oracle';

const SKIP_FIRST: DstPolicy = { nonexistent: 'skip', repeated: 'first' };
const SKIP_LAST: DstPolicy = { nonexistent: 'skip', repeated: 'last' };
const SKIP_BOTH: DstPolicy = { nonexistent: 'skip', repeated: 'both' };
const SHIFT_FIRST: DstPolicy = { nonexistent: 'shift_forward', repeated: 'first' };

interface Vector {
  name: string;
  cron: string;
  timezone: string;
  dstPolicy?: DstPolicy;
  after: string;
  count: number;
  /** [UTC instant, local wall time with offset] */
  expected: [string, string][];
}

const vectors: Vector[] = [
  // America/New_York 2027: EST -05:00 until Sun 2027-03-14 02:00 -> 03:00 EDT (-04:00), i.e.
  // 07:00Z; back to EST on Sun 2027-11-07 02:00 EDT -> 01:00 EST, i.e. 06:00Z.
  {
    name: 'NY spring gap, skip: 02:30 does not exist on 2027-03-14',
    cron: '30 2 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_FIRST,
    after: '2027-03-13T00:00:00Z',
    count: 2,
    expected: [
      ['2027-03-13T07:30:00.000Z', '2027-03-13T02:30:00-05:00'],
      ['2027-03-15T06:30:00.000Z', '2027-03-15T02:30:00-04:00'],
    ],
  },
  {
    name: 'NY spring gap, default policy is skip/first',
    cron: '30 2 * * *',
    timezone: 'America/New_York',
    after: '2027-03-13T08:00:00Z',
    count: 1,
    expected: [['2027-03-15T06:30:00.000Z', '2027-03-15T02:30:00-04:00']],
  },
  {
    name: 'NY spring gap, shift_forward: runs when the gap ends, 03:00 EDT',
    cron: '30 2 * * *',
    timezone: 'America/New_York',
    dstPolicy: SHIFT_FIRST,
    after: '2027-03-13T00:00:00Z',
    count: 3,
    expected: [
      ['2027-03-13T07:30:00.000Z', '2027-03-13T02:30:00-05:00'],
      ['2027-03-14T07:00:00.000Z', '2027-03-14T03:00:00-04:00'],
      ['2027-03-15T06:30:00.000Z', '2027-03-15T02:30:00-04:00'],
    ],
  },
  {
    name: 'NY shift_forward: four gap times collapse into one run',
    cron: '*/15 2 * * *',
    timezone: 'America/New_York',
    dstPolicy: SHIFT_FIRST,
    after: '2027-03-14T05:00:00Z',
    count: 3,
    expected: [
      ['2027-03-14T07:00:00.000Z', '2027-03-14T03:00:00-04:00'],
      ['2027-03-15T06:00:00.000Z', '2027-03-15T02:00:00-04:00'],
      ['2027-03-15T06:15:00.000Z', '2027-03-15T02:15:00-04:00'],
    ],
  },
  {
    name: 'NY shift_forward: shifted 02:00/02:30 and the real 03:00 are one run',
    cron: '0,30 2-3 * * *',
    timezone: 'America/New_York',
    dstPolicy: SHIFT_FIRST,
    after: '2027-03-14T05:00:00Z',
    count: 3,
    expected: [
      ['2027-03-14T07:00:00.000Z', '2027-03-14T03:00:00-04:00'],
      ['2027-03-14T07:30:00.000Z', '2027-03-14T03:30:00-04:00'],
      ['2027-03-15T06:00:00.000Z', '2027-03-15T02:00:00-04:00'],
    ],
  },
  {
    name: 'NY spring: 6-field 02:30:30 shifted to 03:00:00',
    cron: '30 30 2 * * *',
    timezone: 'America/New_York',
    dstPolicy: SHIFT_FIRST,
    after: '2027-03-14T00:00:00Z',
    count: 1,
    expected: [['2027-03-14T07:00:00.000Z', '2027-03-14T03:00:00-04:00']],
  },
  {
    name: 'NY fall back, first: 01:30 once, at its EDT instant',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_FIRST,
    after: '2027-11-06T12:00:00Z',
    count: 2,
    expected: [
      ['2027-11-07T05:30:00.000Z', '2027-11-07T01:30:00-04:00'],
      ['2027-11-08T06:30:00.000Z', '2027-11-08T01:30:00-05:00'],
    ],
  },
  {
    name: 'NY fall back, last: 01:30 once, at its EST instant',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_LAST,
    after: '2027-11-06T12:00:00Z',
    count: 2,
    expected: [
      ['2027-11-07T06:30:00.000Z', '2027-11-07T01:30:00-05:00'],
      ['2027-11-08T06:30:00.000Z', '2027-11-08T01:30:00-05:00'],
    ],
  },
  {
    name: 'NY fall back, both: 01:30 twice',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_BOTH,
    after: '2027-11-06T12:00:00Z',
    count: 3,
    expected: [
      ['2027-11-07T05:30:00.000Z', '2027-11-07T01:30:00-04:00'],
      ['2027-11-07T06:30:00.000Z', '2027-11-07T01:30:00-05:00'],
      ['2027-11-08T06:30:00.000Z', '2027-11-08T01:30:00-05:00'],
    ],
  },
  {
    name: 'NY fall back, both: output is UTC order, not local order',
    cron: '*/20 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_BOTH,
    after: '2027-11-07T00:00:00Z',
    count: 7,
    expected: [
      ['2027-11-07T05:00:00.000Z', '2027-11-07T01:00:00-04:00'],
      ['2027-11-07T05:20:00.000Z', '2027-11-07T01:20:00-04:00'],
      ['2027-11-07T05:40:00.000Z', '2027-11-07T01:40:00-04:00'],
      ['2027-11-07T06:00:00.000Z', '2027-11-07T01:00:00-05:00'],
      ['2027-11-07T06:20:00.000Z', '2027-11-07T01:20:00-05:00'],
      ['2027-11-07T06:40:00.000Z', '2027-11-07T01:40:00-05:00'],
      ['2027-11-08T06:00:00.000Z', '2027-11-08T01:00:00-05:00'],
    ],
  },
  {
    name: 'NY fall back, both: after between the two 01:30s yields only the second',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_BOTH,
    after: '2027-11-07T05:45:00Z',
    count: 1,
    expected: [['2027-11-07T06:30:00.000Z', '2027-11-07T01:30:00-05:00']],
  },
  {
    name: 'NY fall back, first: after the first 01:30, the second is not owed',
    cron: '30 1 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_FIRST,
    after: '2027-11-07T05:45:00Z',
    count: 1,
    expected: [['2027-11-08T06:30:00.000Z', '2027-11-08T01:30:00-05:00']],
  },
  {
    name: 'NY fall back: 02:00 is not repeated (02:00 EDT never shows)',
    cron: '0 2 * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_BOTH,
    after: '2027-11-06T12:00:00Z',
    count: 1,
    expected: [['2027-11-07T07:00:00.000Z', '2027-11-07T02:00:00-05:00']],
  },
  {
    name: 'NY hourly across fall back with first: the repeated hour is not rerun',
    cron: '0 * * * *',
    timezone: 'America/New_York',
    dstPolicy: SKIP_FIRST,
    after: '2027-11-07T03:30:00Z',
    count: 4,
    expected: [
      ['2027-11-07T04:00:00.000Z', '2027-11-07T00:00:00-04:00'],
      ['2027-11-07T05:00:00.000Z', '2027-11-07T01:00:00-04:00'],
      ['2027-11-07T07:00:00.000Z', '2027-11-07T02:00:00-05:00'],
      ['2027-11-07T08:00:00.000Z', '2027-11-07T03:00:00-05:00'],
    ],
  },

  // Europe/London 2027: GMT +00:00; Sun 2027-03-28 01:00 GMT -> 02:00 BST (+01:00) at 01:00Z;
  // Sun 2027-10-31 02:00 BST -> 01:00 GMT at 01:00Z.
  {
    name: 'London spring gap, skip',
    cron: '30 1 * * *',
    timezone: 'Europe/London',
    dstPolicy: SKIP_FIRST,
    after: '2027-03-27T00:00:00Z',
    count: 2,
    expected: [
      ['2027-03-27T01:30:00.000Z', '2027-03-27T01:30:00+00:00'],
      ['2027-03-29T00:30:00.000Z', '2027-03-29T01:30:00+01:00'],
    ],
  },
  {
    name: 'London spring gap, shift_forward to 02:00 BST',
    cron: '30 1 * * *',
    timezone: 'Europe/London',
    dstPolicy: SHIFT_FIRST,
    after: '2027-03-27T12:00:00Z',
    count: 1,
    expected: [['2027-03-28T01:00:00.000Z', '2027-03-28T02:00:00+01:00']],
  },
  {
    name: 'London autumn, first',
    cron: '30 1 * * *',
    timezone: 'Europe/London',
    dstPolicy: SKIP_FIRST,
    after: '2027-10-30T12:00:00Z',
    count: 2,
    expected: [
      ['2027-10-31T00:30:00.000Z', '2027-10-31T01:30:00+01:00'],
      ['2027-11-01T01:30:00.000Z', '2027-11-01T01:30:00+00:00'],
    ],
  },
  {
    name: 'London autumn, last',
    cron: '30 1 * * *',
    timezone: 'Europe/London',
    dstPolicy: SKIP_LAST,
    after: '2027-10-30T12:00:00Z',
    count: 1,
    expected: [['2027-10-31T01:30:00.000Z', '2027-10-31T01:30:00+00:00']],
  },
  {
    name: 'London autumn, both',
    cron: '30 1 * * *',
    timezone: 'Europe/London',
    dstPolicy: SKIP_BOTH,
    after: '2027-10-30T12:00:00Z',
    count: 2,
    expected: [
      ['2027-10-31T00:30:00.000Z', '2027-10-31T01:30:00+01:00'],
      ['2027-10-31T01:30:00.000Z', '2027-10-31T01:30:00+00:00'],
    ],
  },

  // Australia/Lord_Howe: +10:30 standard, +11:00 DST (a 30-minute shift). Sun 2027-04-04
  // 02:00 (+11) -> 01:30 (+10:30) at 2027-04-03T15:00Z; Sun 2027-10-03 02:00 (+10:30) -> 02:30
  // (+11) at 2027-10-02T15:30Z.
  {
    name: 'Lord Howe October gap, skip 02:15',
    cron: '15 2 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_FIRST,
    after: '2027-10-01T00:00:00Z',
    count: 2,
    expected: [
      ['2027-10-01T15:45:00.000Z', '2027-10-02T02:15:00+10:30'],
      ['2027-10-03T15:15:00.000Z', '2027-10-04T02:15:00+11:00'],
    ],
  },
  {
    name: 'Lord Howe October gap, shift_forward 02:15 to 02:30',
    cron: '15 2 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SHIFT_FIRST,
    after: '2027-10-02T00:00:00Z',
    count: 2,
    expected: [
      ['2027-10-02T15:30:00.000Z', '2027-10-03T02:30:00+11:00'],
      ['2027-10-03T15:15:00.000Z', '2027-10-04T02:15:00+11:00'],
    ],
  },
  {
    name: 'Lord Howe: 02:45 is unaffected by the half-hour gap',
    cron: '45 2 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_FIRST,
    after: '2027-10-02T00:00:00Z',
    count: 1,
    expected: [['2027-10-02T15:45:00.000Z', '2027-10-03T02:45:00+11:00']],
  },
  {
    name: 'Lord Howe April overlap, first',
    cron: '45 1 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_FIRST,
    after: '2027-04-02T00:00:00Z',
    count: 3,
    expected: [
      ['2027-04-02T14:45:00.000Z', '2027-04-03T01:45:00+11:00'],
      ['2027-04-03T14:45:00.000Z', '2027-04-04T01:45:00+11:00'],
      ['2027-04-04T15:15:00.000Z', '2027-04-05T01:45:00+10:30'],
    ],
  },
  {
    name: 'Lord Howe April overlap, last',
    cron: '45 1 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_LAST,
    after: '2027-04-03T00:00:00Z',
    count: 1,
    expected: [['2027-04-03T15:15:00.000Z', '2027-04-04T01:45:00+10:30']],
  },
  {
    name: 'Lord Howe April overlap, both (30 minutes apart)',
    cron: '45 1 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_BOTH,
    after: '2027-04-03T00:00:00Z',
    count: 2,
    expected: [
      ['2027-04-03T14:45:00.000Z', '2027-04-04T01:45:00+11:00'],
      ['2027-04-03T15:15:00.000Z', '2027-04-04T01:45:00+10:30'],
    ],
  },
  {
    name: 'Lord Howe: 01:15 precedes the overlap window and happens once',
    cron: '15 1 * * *',
    timezone: 'Australia/Lord_Howe',
    dstPolicy: SKIP_BOTH,
    after: '2027-04-03T00:00:00Z',
    count: 1,
    expected: [['2027-04-03T14:15:00.000Z', '2027-04-04T01:15:00+11:00']],
  },

  // Asia/Kolkata: +05:30 all year, no DST.
  {
    name: 'Kolkata daily 09:00 = 03:30Z',
    cron: '0 9 * * *',
    timezone: 'Asia/Kolkata',
    after: '2027-03-13T00:00:00Z',
    count: 3,
    expected: [
      ['2027-03-13T03:30:00.000Z', '2027-03-13T09:00:00+05:30'],
      ['2027-03-14T03:30:00.000Z', '2027-03-14T09:00:00+05:30'],
      ['2027-03-15T03:30:00.000Z', '2027-03-15T09:00:00+05:30'],
    ],
  },
  {
    name: 'Kolkata 00:15 is the previous UTC day',
    cron: '15 0 * * *',
    timezone: 'Asia/Kolkata',
    after: '2027-11-06T00:00:00Z',
    count: 2,
    expected: [
      ['2027-11-06T18:45:00.000Z', '2027-11-07T00:15:00+05:30'],
      ['2027-11-07T18:45:00.000Z', '2027-11-08T00:15:00+05:30'],
    ],
  },

  // Pacific/Apia skipped 2011-12-30 entirely: 2011-12-29 23:59:59 -10:00 was followed by
  // 2011-12-31 00:00:00 +14:00, at 2011-12-30T10:00:00Z (Node/ICU tz data agrees).
  {
    name: 'Apia: no noon on the missing 2011-12-30, skip',
    cron: '0 12 * * *',
    timezone: 'Pacific/Apia',
    dstPolicy: SKIP_FIRST,
    after: '2011-12-29T00:00:00Z',
    count: 3,
    expected: [
      ['2011-12-29T22:00:00.000Z', '2011-12-29T12:00:00-10:00'],
      ['2011-12-30T22:00:00.000Z', '2011-12-31T12:00:00+14:00'],
      ['2011-12-31T22:00:00.000Z', '2012-01-01T12:00:00+14:00'],
    ],
  },
  {
    name: 'Apia: shift_forward moves the missing noon to the end of the gap (Dec 31 00:00)',
    cron: '0 12 * * *',
    timezone: 'Pacific/Apia',
    dstPolicy: SHIFT_FIRST,
    after: '2011-12-29T00:00:00Z',
    count: 3,
    expected: [
      ['2011-12-29T22:00:00.000Z', '2011-12-29T12:00:00-10:00'],
      ['2011-12-30T10:00:00.000Z', '2011-12-31T00:00:00+14:00'],
      ['2011-12-30T22:00:00.000Z', '2011-12-31T12:00:00+14:00'],
    ],
  },
  {
    name: 'Apia: shifted Dec 30 midnight coincides with the real Dec 31 midnight: one run',
    cron: '0 0 * * *',
    timezone: 'Pacific/Apia',
    dstPolicy: SHIFT_FIRST,
    after: '2011-12-29T00:00:00Z',
    count: 3,
    expected: [
      ['2011-12-29T10:00:00.000Z', '2011-12-29T00:00:00-10:00'],
      ['2011-12-30T10:00:00.000Z', '2011-12-31T00:00:00+14:00'],
      ['2011-12-31T10:00:00.000Z', '2012-01-01T00:00:00+14:00'],
    ],
  },
  {
    name: 'Apia: every 6 hours through the missing day, shift_forward',
    cron: '0 */6 * * *',
    timezone: 'Pacific/Apia',
    dstPolicy: SHIFT_FIRST,
    after: '2011-12-29T20:00:00Z',
    count: 3,
    expected: [
      // 2011-12-29 12:00 -10:00, 18:00 -10:00, then all of Dec 30 -> Dec 31 00:00 +14:00.
      ['2011-12-29T22:00:00.000Z', '2011-12-29T12:00:00-10:00'],
      ['2011-12-30T04:00:00.000Z', '2011-12-29T18:00:00-10:00'],
      ['2011-12-30T10:00:00.000Z', '2011-12-31T00:00:00+14:00'],
    ],
  },
  {
    name: 'Apia: a schedule only for Dec 30 skips 2011 and runs in 2012',
    cron: '0 12 30 12 *',
    timezone: 'Pacific/Apia',
    dstPolicy: SKIP_FIRST,
    after: '2011-12-01T00:00:00Z',
    count: 1,
    // 2012-12-30 is in Apia's summer time, +14:00.
    expected: [['2012-12-29T22:00:00.000Z', '2012-12-30T12:00:00+14:00']],
  },

  // UTC calendar vectors (dates checked with `date -u -d ... +%A`: 2027-01-01 is a Friday).
  {
    name: '6-field every 15 seconds',
    cron: '*/15 * * * * *',
    timezone: 'UTC',
    after: '2027-01-01T00:00:00Z',
    count: 5,
    expected: [
      ['2027-01-01T00:00:15.000Z', '2027-01-01T00:00:15+00:00'],
      ['2027-01-01T00:00:30.000Z', '2027-01-01T00:00:30+00:00'],
      ['2027-01-01T00:00:45.000Z', '2027-01-01T00:00:45+00:00'],
      ['2027-01-01T00:01:00.000Z', '2027-01-01T00:01:00+00:00'],
      ['2027-01-01T00:01:15.000Z', '2027-01-01T00:01:15+00:00'],
    ],
  },
  {
    name: 'DOM/DOW OR: the 13th or any Friday (Jan 2027)',
    cron: '0 0 13 * FRI',
    timezone: 'UTC',
    after: '2026-12-31T00:00:00Z',
    count: 6,
    expected: [
      ['2027-01-01T00:00:00.000Z', '2027-01-01T00:00:00+00:00'],
      ['2027-01-08T00:00:00.000Z', '2027-01-08T00:00:00+00:00'],
      ['2027-01-13T00:00:00.000Z', '2027-01-13T00:00:00+00:00'],
      ['2027-01-15T00:00:00.000Z', '2027-01-15T00:00:00+00:00'],
      ['2027-01-22T00:00:00.000Z', '2027-01-22T00:00:00+00:00'],
      ['2027-01-29T00:00:00.000Z', '2027-01-29T00:00:00+00:00'],
    ],
  },
  {
    name: 'Vixie: */2 day-of-month counts as unrestricted, so days AND Mondays',
    cron: '0 0 */2 * MON',
    timezone: 'UTC',
    after: '2027-01-01T00:00:00Z',
    count: 3,
    // Mondays of 2027 on odd dates: Jan 11, Jan 25, Feb 1 (Jan 4 and Jan 18 are even).
    expected: [
      ['2027-01-11T00:00:00.000Z', '2027-01-11T00:00:00+00:00'],
      ['2027-01-25T00:00:00.000Z', '2027-01-25T00:00:00+00:00'],
      ['2027-02-01T00:00:00.000Z', '2027-02-01T00:00:00+00:00'],
    ],
  },
  {
    name: 'Feb 29 only in leap years',
    cron: '0 0 29 2 *',
    timezone: 'UTC',
    after: '2027-01-01T00:00:00Z',
    count: 3,
    expected: [
      ['2028-02-29T00:00:00.000Z', '2028-02-29T00:00:00+00:00'],
      ['2032-02-29T00:00:00.000Z', '2032-02-29T00:00:00+00:00'],
      ['2036-02-29T00:00:00.000Z', '2036-02-29T00:00:00+00:00'],
    ],
  },
  {
    name: 'Feb 29 across 2100 (not a leap year): 8-year wait',
    cron: '0 0 29 2 *',
    timezone: 'UTC',
    after: '2096-03-01T00:00:00Z',
    count: 1,
    expected: [['2104-02-29T00:00:00.000Z', '2104-02-29T00:00:00+00:00']],
  },
  {
    name: 'Feb 29 that is a Sunday (AND via */7): 28-year cycle, 2032 then 2060',
    cron: '0 0 29 2 */7',
    timezone: 'UTC',
    after: '2028-03-01T00:00:00Z',
    count: 2,
    expected: [
      ['2032-02-29T00:00:00.000Z', '2032-02-29T00:00:00+00:00'],
      ['2060-02-29T00:00:00.000Z', '2060-02-29T00:00:00+00:00'],
    ],
  },
  {
    name: 'month and weekday names with steps',
    cron: '0 9 * JAN-MAR/2 MON-FRI/2',
    timezone: 'UTC',
    after: '2027-02-26T00:00:00Z',
    count: 3,
    // Months Jan and Mar; Mon, Wed, Fri. 2027-03-01 is a Monday.
    expected: [
      ['2027-03-01T09:00:00.000Z', '2027-03-01T09:00:00+00:00'],
      ['2027-03-03T09:00:00.000Z', '2027-03-03T09:00:00+00:00'],
      ['2027-03-05T09:00:00.000Z', '2027-03-05T09:00:00+00:00'],
    ],
  },
  {
    name: 'day-of-week 7 is Sunday',
    cron: '0 0 * * 7',
    timezone: 'UTC',
    after: '2027-01-01T00:00:00Z',
    count: 2,
    expected: [
      ['2027-01-03T00:00:00.000Z', '2027-01-03T00:00:00+00:00'],
      ['2027-01-10T00:00:00.000Z', '2027-01-10T00:00:00+00:00'],
    ],
  },
  {
    name: 'year rollover',
    cron: '59 23 31 12 *',
    timezone: 'Etc/UTC',
    after: '2027-06-01T00:00:00Z',
    count: 2,
    expected: [
      ['2027-12-31T23:59:00.000Z', '2027-12-31T23:59:00+00:00'],
      ['2028-12-31T23:59:00.000Z', '2028-12-31T23:59:00+00:00'],
    ],
  },
  {
    name: 'Etc/GMT+5 is UTC-5 (POSIX sign inversion)',
    cron: '0 12 * * *',
    timezone: 'Etc/GMT+5',
    after: '2027-07-01T00:00:00Z',
    count: 1,
    expected: [['2027-07-01T17:00:00.000Z', '2027-07-01T12:00:00-05:00']],
  },
];

const render = (occurrences: Occurrence[]) =>
  occurrences.map((o): [string, string] => [o.at.toISOString(), o.local]);

describe('nextOccurrences: hand-computed vectors', () => {
  it.each(vectors)('$name', ({ cron, timezone, dstPolicy, after, count, expected }) => {
    const spec: RecurrenceSpec = { cron, timezone, dstPolicy };
    const result = nextOccurrences(spec, new Date(after), count);
    expect(render(result)).toEqual(expected);
    for (const o of result) expect(o.local).toBe(intlLocalIso(o.at, timezone));
  });
});
