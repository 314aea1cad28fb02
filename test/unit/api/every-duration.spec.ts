import { everySeconds, everyText } from '../../../src/api/schedules/schedule-request.mapper';
import { ValidationError } from '../../../src/common';

describe('interval durations (every)', () => {
  it.each<[string, number, string]>([
    ['90m', 5400, '1h30m'],
    ['1h30m', 5400, '1h30m'],
    ['45s', 45, '45s'],
    ['2d', 172_800, '2d'],
    ['1d2h3m4s', 93_784, '1d2h3m4s'],
    ['3600s', 3600, '1h'],
  ])('%s is %i seconds, written back as %s', (text, seconds, canonical) => {
    expect(everySeconds(text)).toBe(seconds);
    expect(everyText(seconds)).toBe(canonical);
  });

  it.each(['', 'm', '1x', '1m1h', '1.5h', '-1m', '1h 30m'])('%p is refused', (text) => {
    expect(() => everySeconds(text)).toThrow(ValidationError);
  });
});
