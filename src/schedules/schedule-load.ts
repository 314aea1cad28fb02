import type { LoadSource } from '../load-profile';
import type { ScheduleDefinition } from './schedule';

/** The parts of a definition its projected load depends on (see load-profile). */
export function loadSourceOf(definition: ScheduleDefinition): LoadSource {
  const { timing } = definition;
  return {
    priority: definition.priority,
    endAt: definition.endAt,
    timing:
      timing.kind === 'once'
        ? { kind: 'once', runAt: timing.runAt }
        : timing.kind === 'cron'
          ? { kind: 'cron', cron: timing.cron, timezone: timing.timezone }
          : { kind: 'cron', cron: intervalAsCron(timing.everySeconds), timezone: 'UTC' },
  };
}

/**
 * The load profile counts cron patterns. An interval counts as the densest-or-equal cron that
 * repeats with the profile's periods: the step is the largest divisor of the minute, hour or
 * day not above the interval (45 s counts as every 30 s, 90 min as every hour, 2 days as
 * daily), so its projected load is never below the real one. Its phase (anchorAt) is not kept:
 * the slots are the pattern's, not the interval's own minutes.
 */
export function intervalAsCron(everySeconds: number): string {
  const step = (within: number, units: number) =>
    Math.max(...divisors(within).filter((d) => d <= Math.max(1, Math.floor(units))));
  if (everySeconds < 60) return `*/${step(60, everySeconds)} * * * * *`;
  if (everySeconds < 3600) return `0 */${step(60, everySeconds / 60)} * * * *`;
  if (everySeconds < 86_400) return `0 0 */${step(24, everySeconds / 3600)} * * *`;
  return '0 0 0 * * *';
}

function divisors(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1).filter((d) => n % d === 0);
}
