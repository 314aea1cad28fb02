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
        : { kind: 'cron', cron: timing.cron, timezone: timing.timezone },
  };
}
