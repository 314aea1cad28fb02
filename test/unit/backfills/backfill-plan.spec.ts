import { actionFor, dispatchFrontier } from '../../../src/backfills/backfill-plan';
import type { Schedule } from '../../../src/schedules';

const at = new Date('2026-06-01T09:00:00Z');

describe('backfill plan', () => {
  it.each<[string, { state: string } | undefined, string, string]>([
    ['no run', undefined, 'missing', 'run'],
    ['SUCCEEDED, missing', { state: 'SUCCEEDED' }, 'missing', 'skip_existing'],
    ['FAILED, missing', { state: 'FAILED' }, 'missing', 'skip_existing'],
    ['FAILED, failed', { state: 'FAILED' }, 'failed', 'rerun'],
    ['UNKNOWN, failed', { state: 'UNKNOWN' }, 'failed', 'rerun'],
    ['SUCCEEDED, failed', { state: 'SUCCEEDED' }, 'failed', 'skip_existing'],
    ['CANCELLED, failed', { state: 'CANCELLED' }, 'failed', 'skip_existing'],
    ['SUCCEEDED, all', { state: 'SUCCEEDED' }, 'all', 'rerun'],
    ['QUEUED, all', { state: 'QUEUED' }, 'all', 'skip_active'],
    ['RUNNING, all', { state: 'RUNNING' }, 'all', 'skip_active'],
    ['RETRY_WAIT, failed', { state: 'RETRY_WAIT' }, 'failed', 'skip_active'],
  ])('%s -> %s', (_name, existing, reprocess, action) => {
    expect(actionFor(at, Infinity, existing as never, reprocess as never)).toBe(action);
  });

  it('leaves the instants at or after the frontier to the schedule, whatever reprocess says', () => {
    expect(actionFor(at, at.getTime(), undefined, 'all')).toBe('left_to_schedule');
    expect(actionFor(at, at.getTime() + 1, undefined, 'all')).toBe('run');
  });

  it('the frontier: an active schedule is at nextDueAt, a paused one where its pause began', () => {
    const base = { nextDueAt: new Date('2026-06-02Z'), updatedAt: new Date('2026-05-30Z') };
    expect(dispatchFrontier({ ...base, status: 'active' } as Schedule)).toBe(
      Date.parse('2026-06-02Z'),
    );
    expect(dispatchFrontier({ ...base, status: 'paused' } as Schedule)).toBe(
      Date.parse('2026-05-30Z'),
    );
    expect(dispatchFrontier({ ...base, status: 'completed' } as Schedule)).toBe(Infinity);
    expect(dispatchFrontier({ ...base, nextDueAt: null, status: 'active' } as Schedule)).toBe(
      Infinity,
    );
  });
});
