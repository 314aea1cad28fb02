import { IANAZone } from 'luxon';
import { toLocalIso, zoneOffsetFn } from '../../../src/recurrence';

/** A zone's offsets, remembered per zone for the instant last asked: never another instant's. */
describe('zone offsets', () => {
  const hour = 3_600_000;
  // 2026-03-08 07:00Z is 02:00 EST, when New York springs forward to EDT.
  const springForward = Date.UTC(2026, 2, 8, 7);
  const luxon = (zone: string, ms: number) => Math.round(IANAZone.create(zone).offset(ms) * 60_000);

  it("answers each instant with the zone's own offset, asked in any order and from any fn", () => {
    const instants = [
      springForward - hour,
      springForward + hour,
      springForward - hour,
      springForward - 1,
      springForward,
      springForward,
    ];
    const first = zoneOffsetFn('America/New_York');
    const second = zoneOffsetFn('America/New_York');
    const answers = instants.map((ms, i) => (i % 2 ? second : first)(ms));
    expect(answers).toEqual(instants.map((ms) => luxon('America/New_York', ms)));
    expect(answers.slice(0, 2)).toEqual([-5 * hour, -4 * hour]);
  });

  it('keeps zones apart at one instant', () => {
    const berlin = zoneOffsetFn('Europe/Berlin');
    const tokyo = zoneOffsetFn('Asia/Tokyo');
    expect([berlin(springForward), tokyo(springForward), berlin(springForward)]).toEqual([
      1 * hour,
      9 * hour,
      1 * hour,
    ]);
  });

  it('gives UTC and its aliases no offset, and renders their wall time with +00:00', () => {
    for (const zone of ['UTC', 'Etc/UTC', 'Etc/GMT', 'GMT']) {
      expect(zoneOffsetFn(zone)(springForward)).toBe(0);
      expect(luxon(zone, springForward)).toBe(0);
    }
    expect(toLocalIso(new Date(springForward + 1500), 'UTC')).toBe('2026-03-08T07:00:01+00:00');
  });

  it('still refuses what is not an IANA zone', () => {
    expect(() => zoneOffsetFn('UTC+1')).toThrow();
    expect(() => zoneOffsetFn('Mars/Olympus')).toThrow();
  });
});
