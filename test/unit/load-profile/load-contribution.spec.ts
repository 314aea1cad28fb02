import {
  LoadProjections,
  LoadWindow,
  projectLoad,
  type LoadContribution,
  type LoadSource,
} from '../../../src/load-profile';

describe('projectLoad', () => {
  const now = new Date('2027-01-15T10:00:00Z');
  const cron = (expression: string, timezone = 'UTC', extra: Partial<LoadSource> = {}) =>
    projectLoad(
      {
        priority: 'normal',
        endAt: null,
        timing: { kind: 'cron', cron: expression, timezone },
        ...extra,
      },
      now,
    );

  it('reduces a cron to the period it repeats in, with its runs per minute', () => {
    expect(cron('* * * * * *')).toEqual({ period: 'minute', runs: 60 });
    expect(cron('*/10 * * * * *')).toEqual({ period: 'minute', runs: 6 });
    expect(cron('*/15 * * * *')).toEqual({ period: 'hour', slots: [0, 15, 30, 45], runs: 1 });
    expect(cron('0 9 * * *')).toEqual({ period: 'day', slots: [540], runs: 1 });
  });

  it('places local times in UTC with the zone offset of the moment', () => {
    // Paris is UTC+1 in January: 09:00 local is 08:00 UTC.
    expect(cron('0 9 * * *', 'Europe/Paris')).toEqual({ period: 'day', slots: [480], runs: 1 });
    // Kolkata is UTC+5:30: minute 0 of the local hour is minute 30 of the UTC hour.
    expect(cron('0 * * * *', 'Asia/Kolkata')).toEqual({ period: 'hour', slots: [30], runs: 1 });
  });

  it('counts a day-restricted cron as if it ran every day (the busiest day)', () => {
    expect(cron('30 17 * * 1-5')).toEqual({ period: 'day', slots: [1050], runs: 1 });
  });

  it('exempts low priority and schedules that have ended', () => {
    expect(cron('* * * * *', 'UTC', { priority: 'low' })).toBeNull();
    expect(cron('* * * * *', 'UTC', { endAt: new Date('2027-01-01T00:00:00Z') })).toBeNull();
  });

  it('puts a one-time run in its minute', () => {
    const at = new Date('2027-01-15T12:34:56.789Z');
    expect(
      projectLoad({ priority: 'high', endAt: null, timing: { kind: 'once', runAt: at } }, now),
    ).toEqual({ period: 'instant', minute: '2027-01-15T12:34:00.000Z', runs: 1 });
  });
});

describe('LoadProjections', () => {
  it('projects each recurring pattern of a batch once, as projectLoad would', () => {
    const now = new Date('2027-01-15T10:00:00Z');
    const projections = new LoadProjections(now);
    const source = (cron: string, timezone: string): LoadSource => ({
      priority: 'normal',
      endAt: null,
      timing: { kind: 'cron', cron, timezone },
    });
    const first = projections.of(source('0 9 * * *', 'Europe/Paris'));
    expect(first).toEqual(projectLoad(source('0 9 * * *', 'Europe/Paris'), now));
    expect(projections.of(source('0 9 * * *', 'Europe/Paris'))).toBe(first);
    expect(projections.of(source('0 9 * * *', 'UTC'))).toEqual({
      period: 'day',
      slots: [540],
      runs: 1,
    });
    expect(projections.of({ ...source('0 9 * * *', 'UTC'), priority: 'low' })).toBeNull();
  });
});

describe('LoadWindow', () => {
  const start = new Date('2027-01-15T10:00:00Z');
  const empty = (allowed: number) =>
    new LoadWindow(start, allowed, new Array(1440).fill(0), new Array(1440).fill(0));

  it('finds the worst minute a contribution would take past the limit', () => {
    const w = empty(10);
    w.add({ period: 'day', slots: [600], runs: 8 }); // 10:00 UTC
    expect(w.overloadBy({ period: 'hour', slots: [0], runs: 2 })).toBeNull();
    const over = w.overloadBy({ period: 'hour', slots: [0], runs: 3 });
    expect(over).toEqual({ minute: new Date('2027-01-15T10:00:00Z'), runs: 11 });
  });

  it('does not count what a schedule replaces, and never refuses a change that only lowers', () => {
    const w = empty(10);
    const old = { period: 'minute', runs: 9 } as const;
    w.add(old);
    w.add({ period: 'day', slots: [601], runs: 5 }); // 10:01 is at 14, over already
    expect(w.overloadBy({ period: 'minute', runs: 10 }, old)).toEqual({
      minute: new Date('2027-01-15T10:01:00Z'),
      runs: 15,
    });
    expect(w.overloadBy({ period: 'minute', runs: 8 }, old)).toBeNull();
  });

  it('checks a one-time run beyond the window against the pattern and its minute', () => {
    const w = empty(3);
    w.add({ period: 'day', slots: [600], runs: 2 });
    const later = '2027-01-20T10:00:00.000Z';
    w.knowLater(later, 1);
    expect(w.isLater({ period: 'instant', minute: later, runs: 1 })).toBe(true);
    expect(w.overloadBy({ period: 'instant', minute: later, runs: 1 })).toEqual({
      minute: new Date(later),
      runs: 4,
    });
    expect(
      w.overloadBy({ period: 'instant', minute: '2027-01-20T10:01:00.000Z', runs: 1 }),
    ).toBeNull();
  });

  it('lists the busiest minutes first', () => {
    const w = empty(100);
    w.add({ period: 'day', slots: [605], runs: 3 });
    w.add({ period: 'instant', minute: '2027-01-15T10:02:00.000Z', runs: 5 });
    expect(w.busiest(2)).toEqual([
      { minute: new Date('2027-01-15T10:02:00Z'), runs: 5 },
      { minute: new Date('2027-01-15T10:05:00Z'), runs: 3 },
    ]);
  });

  it('adds up the counters per minute of the window (LoadWindow.of)', () => {
    const w = LoadWindow.of(start, 100, {
      recurring: [
        { period: 'minute', slot: 0, runs: 1 },
        { period: 'hour', slot: 0, runs: 2 },
        { period: 'day', slot: 601, runs: 4 },
      ],
      instants: [{ minute: new Date('2027-01-15T10:01:00Z'), runs: 8 }],
    });
    expect(w.busiest(3)).toEqual([
      { minute: new Date('2027-01-15T10:01:00Z'), runs: 13 },
      { minute: new Date('2027-01-15T10:00:00Z'), runs: 3 },
      { minute: new Date('2027-01-15T11:00:00Z'), runs: 3 },
    ]);
  });

  it('places hourly slots of a window that starts inside an hour, and replaces one by another', () => {
    // The window starts at 10:07: index 0 is minute 7 of the hour, minute 15 is index 8.
    const w = new LoadWindow(
      new Date('2027-01-15T10:07:00Z'),
      4,
      new Array(1440).fill(0),
      new Array(1440).fill(0),
    );
    const old: LoadContribution = { period: 'hour', slots: [15], runs: 3 };
    w.add(old);
    w.add({ period: 'day', slots: [620], runs: 1 }); // 10:20 UTC, index 13
    // Moving the 3 runs from :15 to :20 lands on the daily run at 10:20: 4 fits, 5 does not.
    expect(w.overloadBy({ period: 'hour', slots: [20], runs: 3 }, old)).toBeNull();
    expect(w.overloadBy({ period: 'hour', slots: [20], runs: 4 }, old)).toEqual({
      minute: new Date('2027-01-15T10:20:00Z'),
      runs: 5,
    });
    // Keeping :15 and adding a run there replaces the old 3 by 5: over at every :15.
    expect(w.overloadBy({ period: 'hour', slots: [15], runs: 5 }, old)).toEqual({
      minute: new Date('2027-01-15T10:15:00Z'),
      runs: 5,
    });
  });
});
