import { parseCron } from '../../../src/recurrence';
import { intervalAsCron } from '../../../src/schedules/schedule-load';

describe('an interval as the load profile counts it', () => {
  it.each<[number, string]>([
    [1, '*/1 * * * * *'],
    [45, '*/30 * * * * *'],
    [60, '0 */1 * * * *'],
    [5400, '0 0 */1 * * *'],
    [7 * 3600, '0 0 */6 * * *'],
    [2 * 86_400, '0 0 0 * * *'],
  ])('every %i s counts as %s, never fewer runs than it has', (every, cron) => {
    expect(intervalAsCron(every)).toBe(cron);
    const c = parseCron(cron);
    const perDay = c.seconds.length * c.minutes.length * c.hours.length;
    expect(perDay).toBeGreaterThanOrEqual(Math.floor(86_400 / every));
  });
});
