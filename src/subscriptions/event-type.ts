/**
 * The events a tenant can subscribe to, one vocabulary for the API, the ledger and the database
 * check. Every type is opt-in: an event is written only for a subscription that names it.
 */
export const EVENT_TYPES = [
  'run.failed',
  'run.unknown',
  'run.succeeded',
  'run.late',
  'occurrence.skipped',
  'schedule.paused',
  'target.disabled',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && (EVENT_TYPES as readonly string[]).includes(value);
}
