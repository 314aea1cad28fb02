import { planDispatch, SKIP_GRACE_MS } from '../../../src/poller/dispatch-plan';
import { plannedFireAt } from '../../../src/schedules';
import type { Schedule } from '../../../src/schedules/schedule';

const base: Schedule = {
  id: '00000000-0000-4000-8000-000000000001',
  tenantId: '00000000-0000-4000-8000-000000000002',
  revision: 3,
  status: 'active',
  name: 's',
  targetId: '00000000-0000-4000-8000-000000000003',
  payload: {},
  timing: {
    kind: 'cron',
    cron: '* * * * *',
    timezone: 'UTC',
    dstPolicy: { nonexistent: 'skip', repeated: 'first' },
  },
  startAt: null,
  endAt: null,
  missedRunPolicy: 'latest',
  maxCatchUp: 10,
  overlapPolicy: 'skip',
  retryPolicy: {
    maxAttempts: 3,
    initialDelayMs: 1000,
    maxDelayMs: 300000,
    retryDeadlineSeconds: 3600,
  },
  priority: 'normal',
  startDeadlineSeconds: null,
  labels: {},
  excludeDates: [],
  calendarId: null,
  excludedDates: [],
  maxRuns: null,
  pauseAfterConsecutiveFailures: null,
  lateAfterSeconds: null,
  runCount: 0,
  pausedReason: null,
  pausedNote: null,
  flexibleWindowSeconds: 0,
  nextDueAt: null,
  createdAt: new Date(0),
  traceParent: null,
  createdByApiKeyId: null,
  updatedAt: new Date(0),
};
const idle = { active: false, waiting: 0 };
const at = (iso: string) => new Date(iso);
const summary = (plan: ReturnType<typeof planDispatch>) =>
  plan.occurrences.map((o) => [
    o.scheduledAt.toISOString().slice(11, 16),
    o.state,
    o.reason,
    o.publish,
  ]);

describe('planDispatch', () => {
  it('maxRuns: runs only what is left of it, oldest first, then completes the schedule', () => {
    const schedule = {
      ...base,
      missedRunPolicy: 'all' as const,
      overlapPolicy: 'allow' as const,
      maxRuns: 3,
      runCount: 1,
    };
    const plan = planDispatch(
      schedule,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:04:30Z'),
      idle,
    );
    expect(summary(plan)).toEqual([
      ['10:00', 'QUEUED', null, true],
      ['10:01', 'QUEUED', null, true],
    ]);
    expect(plan).toMatchObject({ status: 'completed', nextDueAt: null, runsCreated: 2 });
    const before = planDispatch(
      { ...schedule, runCount: 0 },
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:01:00Z'),
      idle,
    );
    expect(before).toMatchObject({ status: 'active', runsCreated: 2 });
  });

  it('maxRuns: instants skipped for overlap do not count', () => {
    const schedule = { ...base, maxRuns: 1, runCount: 0 };
    const plan = planDispatch(
      schedule,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:00:00.020Z'),
      { active: true, waiting: 0 },
    );
    expect(summary(plan)).toEqual([['10:00', 'SKIPPED', 'overlap', false]]);
    expect(plan).toMatchObject({ status: 'active', runsCreated: 0 });
  });

  it('interval schedules: the instants on the grid from the anchor', () => {
    const schedule = {
      ...base,
      timing: {
        kind: 'interval' as const,
        everySeconds: 90,
        anchorAt: at('2027-01-01T09:59:00Z'),
        timezone: 'UTC',
      },
    };
    const plan = planDispatch(
      schedule,
      at('2027-01-01T10:00:30Z'),
      at('2027-01-01T10:00:30.010Z'),
      idle,
    );
    expect(summary(plan)).toEqual([['10:00', 'QUEUED', null, true]]);
    expect(plan.nextDueAt).toEqual(at('2027-01-01T10:02:00Z'));
  });
  it('dispatches one due instant and moves to the next', () => {
    const plan = planDispatch(
      base,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:00:00.020Z'),
      idle,
    );
    expect(summary(plan)).toEqual([['10:00', 'QUEUED', null, true]]);
    expect(plan.occurrences[0]).toMatchObject({
      revision: 3,
      scheduledLocal: '2027-01-01T10:00:00+00:00',
    });
    expect(plan.nextDueAt).toEqual(at('2027-01-01T10:01:00Z'));
    expect(plan.status).toBe('active');
  });

  it('latest: runs the most recent missed instant and records what it coalesced', () => {
    const plan = planDispatch(base, at('2027-01-01T10:00:00Z'), at('2027-01-01T10:04:30Z'), idle);
    expect(summary(plan)).toEqual([
      ['10:00', 'SKIPPED', 'coalesced', false],
      ['10:01', 'SKIPPED', 'coalesced', false],
      ['10:02', 'SKIPPED', 'coalesced', false],
      ['10:03', 'SKIPPED', 'coalesced', false],
      ['10:04', 'QUEUED', null, true],
    ]);
    expect(plan.occurrences[4]).toMatchObject({
      coalescedCount: 4,
      coalescedFirst: at('2027-01-01T10:00:00Z'),
      coalescedLast: at('2027-01-01T10:03:00Z'),
    });
    expect(plan.nextDueAt).toEqual(at('2027-01-01T10:05:00Z'));
  });

  it('skip: records the missed instants and runs none of them', () => {
    const schedule = { ...base, missedRunPolicy: 'skip' as const };
    const late = planDispatch(
      schedule,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:03:50Z'),
      idle,
    );
    expect(summary(late).map((r) => r[1])).toEqual(['SKIPPED', 'SKIPPED', 'SKIPPED', 'SKIPPED']);
    expect(summary(late).every((r) => r[2] === 'missed')).toBe(true);
    // The newest instant is still run when it is within the grace period.
    const now = new Date(at('2027-01-01T10:03:00Z').getTime() + SKIP_GRACE_MS - 1);
    const recent = planDispatch(schedule, at('2027-01-01T10:00:00Z'), now, idle);
    expect(summary(recent).at(-1)).toEqual(['10:03', 'QUEUED', null, true]);
  });

  it('all: creates each (at most maxCatchUp, oldest first) and queues them behind each other', () => {
    const schedule = { ...base, missedRunPolicy: 'all' as const, maxCatchUp: 3 };
    const plan = planDispatch(
      schedule,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:04:10Z'),
      idle,
    );
    expect(summary(plan)).toEqual([
      ['10:00', 'SKIPPED', 'missed', false],
      ['10:01', 'SKIPPED', 'missed', false],
      ['10:02', 'QUEUED', null, true],
      ['10:03', 'QUEUED', 'waiting_for_previous', false],
      ['10:04', 'QUEUED', 'waiting_for_previous', false],
    ]);
  });

  it.each([
    ['skip', { active: true, waiting: 0 }, ['SKIPPED', 'overlap', false]],
    ['buffer_one', { active: true, waiting: 0 }, ['QUEUED', 'waiting_for_previous', false]],
    ['buffer_one', { active: true, waiting: 1 }, ['SKIPPED', 'overlap', false]],
    ['allow', { active: true, waiting: 0 }, ['QUEUED', null, true]],
    ['skip', { active: false, waiting: 0 }, ['QUEUED', null, true]],
  ] as const)('overlap %s with %p', (overlapPolicy, runs, expected) => {
    const plan = planDispatch(
      { ...base, overlapPolicy },
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:00:01Z'),
      runs,
    );
    expect(summary(plan)).toEqual([['10:00', ...expected]]);
  });

  it('startDeadlineSeconds: an instant already past its deadline is SKIPPED, never queued', () => {
    const schedule = { ...base, missedRunPolicy: 'all' as const, startDeadlineSeconds: 90 };
    const plan = planDispatch(
      schedule,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:02:40Z'),
      idle,
    );
    // 10:00 and 10:01 are more than 90 s late; 10:02 is 40 s late and may still start.
    expect(summary(plan)).toEqual([
      ['10:00', 'SKIPPED', 'deadline_exceeded', false],
      ['10:01', 'SKIPPED', 'deadline_exceeded', false],
      ['10:02', 'QUEUED', null, true],
    ]);
    expect(plan.occurrences[2]).toMatchObject({ startDeadlineSeconds: 90, priority: 'normal' });
  });

  it('completes a one-time schedule', () => {
    const once = { ...base, timing: { kind: 'once' as const, runAt: at('2027-01-01T10:00:00Z') } };
    const plan = planDispatch(
      once,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:00:00.005Z'),
      idle,
    );
    expect(summary(plan)).toEqual([['10:00', 'QUEUED', null, true]]);
    expect(plan).toMatchObject({ nextDueAt: null, status: 'completed' });
  });

  it('completes a cron schedule past its endAt', () => {
    const bounded = { ...base, endAt: at('2027-01-01T10:00:30Z') };
    const plan = planDispatch(
      bounded,
      at('2027-01-01T10:00:00Z'),
      at('2027-01-01T10:00:01Z'),
      idle,
    );
    expect(plan).toMatchObject({ nextDueAt: null, status: 'completed' });
  });

  it('bounds the work after a very long outage', () => {
    const everySecond = {
      ...base,
      timing: { ...base.timing, cron: '* * * * * *' } as Schedule['timing'],
    };
    const plan = planDispatch(
      everySecond,
      at('2027-01-01T00:00:00Z'),
      at('2027-01-03T00:00:00Z'),
      idle,
    );
    expect(plan.occurrences.length).toBeLessThanOrEqual(101);
    const run = plan.occurrences.find((o) => o.state === 'QUEUED')!;
    expect(run.scheduledAt).toEqual(at('2027-01-03T00:00:00Z'));
    expect(run.coalescedCount).toBeGreaterThan(1000);
  });
});

describe('planDispatch with a flexible window', () => {
  const windowed: Schedule = { ...base, flexibleWindowSeconds: 30 };
  const nominal = at('2027-01-01T10:00:00Z');
  const fire = plannedFireAt(windowed.id, nominal, 30);

  it('plans the nominal instant when its entry comes due at the planned fire instant', () => {
    const plan = planDispatch(windowed, fire, new Date(fire.getTime() + 5), idle);
    expect(summary(plan)).toEqual([['10:00', 'QUEUED', null, true]]);
    expect(plan.occurrences[0].scheduledAt).toEqual(nominal);
    expect(plan.occurrences[0].firesAt).toEqual(fire);
    expect(plan.nextDueAt).toEqual(at('2027-01-01T10:01:00Z'));
    expect(plan.nextFiresAt).toEqual(plannedFireAt(windowed.id, at('2027-01-01T10:01:00Z'), 30));
  });

  it('never plans an instant whose planned fire instant has not come', () => {
    // The poller is late for 10:00 and it is now 10:01 + 1 ms: 10:01 fires later in its window.
    const next = plannedFireAt(windowed.id, at('2027-01-01T10:01:00Z'), 30);
    const now = new Date(Math.min(next.getTime() - 1, at('2027-01-01T10:01:00.001Z').getTime()));
    expect(now.getTime()).toBeGreaterThanOrEqual(at('2027-01-01T10:01:00Z').getTime());
    const plan = planDispatch(windowed, fire, now, idle);
    expect(plan.occurrences.map((o) => o.scheduledAt)).toEqual([nominal]);
    expect(plan.nextDueAt).toEqual(at('2027-01-01T10:01:00Z'));
    expect(plan.nextFiresAt).toEqual(next);
  });

  it('a one-time run: its entry is due at the planned fire instant', () => {
    const once: Schedule = { ...windowed, timing: { kind: 'once', runAt: nominal } };
    const plan = planDispatch(once, fire, fire, idle);
    expect(plan.occurrences).toHaveLength(1);
    expect(plan.occurrences[0]).toMatchObject({ scheduledAt: nominal, firesAt: fire });
    expect(plan.status).toBe('completed');
  });
});
