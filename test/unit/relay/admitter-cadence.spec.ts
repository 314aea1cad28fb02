import { AdmitterCadence } from '../../../src/relay/admitter-cadence';

describe('AdmitterCadence', () => {
  let now = 0;
  const cadence = () => new AdmitterCadence(50, 250, 1000, () => now);
  beforeEach(() => (now = 0));

  it('comes back at the active pace until a round finds nothing waiting', () => {
    const c = cadence();
    expect(c.pauseMs()).toBe(50);
    c.roundEnded(3);
    expect(c.pauseMs()).toBe(50);
    c.roundEnded(0);
    expect(c.pauseMs()).toBe(250);
    c.roundEnded(1);
    expect(c.pauseMs()).toBe(50);
  });

  it('keeps the active pace for the hold after this process decided that runs wait', () => {
    const c = cadence();
    c.roundEnded(0);
    now = 10_000;
    c.waitingDecided();
    // The round the decision wakes may come before its commit and find nothing.
    c.roundEnded(0);
    expect(c.pauseMs()).toBe(50);
    now = 10_999;
    expect(c.pauseMs()).toBe(50);
    now = 11_000;
    expect(c.pauseMs()).toBe(250);
  });

  it('asks to be woken by a decision only while it rests, not at the active pace', () => {
    const c = cadence();
    // Active (no round has found nothing yet): a flood's batches need no wake-up each.
    expect(c.waitingDecided()).toBe(false);
    c.roundEnded(0);
    // Still held active by the decision above.
    expect(c.waitingDecided()).toBe(false);
    now = 5_000;
    expect(c.pauseMs()).toBe(250);
    expect(c.waitingDecided()).toBe(true);
    expect(c.pauseMs()).toBe(50);
    expect(c.waitingDecided()).toBe(false);
  });
});
