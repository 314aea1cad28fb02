import { createHash } from 'node:crypto';

/**
 * Where a run fires inside its schedule's flexible window: a deterministic instant in
 * [nominal, nominal + window], derived from the schedule id and the nominal instant only, so
 * every replica, before and after a restart, plans the same one. Never before the nominal
 * instant; exactly it without a window. Spreads a minute-boundary burst of many schedules over
 * the window their owners agreed to, without touching anyone's exact schedule.
 */
export function plannedFireAt(scheduleId: string, nominal: Date, windowSeconds: number): Date {
  if (windowSeconds <= 0) return nominal;
  const digest = createHash('sha256').update(`${scheduleId}@${nominal.toISOString()}`).digest();
  // 48 bits of the digest, uniform over the window's milliseconds (both ends included).
  const offsetMs = digest.readUIntBE(0, 6) % (windowSeconds * 1000 + 1);
  return new Date(nominal.getTime() + offsetMs);
}
