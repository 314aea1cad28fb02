import { Clock } from '../../src/common';

/**
 * A process clock that tests move by hand: frozen at `start` until told otherwise, or running
 * with the real clock at an offset (a replica whose clock is wrong). Due-ness never reads it.
 */
export class ManualClock extends Clock {
  private frozenAt: number | null;
  private offsetMs = 0;

  constructor(start: Date | null = new Date()) {
    super();
    this.frozenAt = start ? start.getTime() : null;
  }

  /** Real time, `offsetMs` ahead (negative: behind). */
  static skewed(offsetMs: number): ManualClock {
    const clock = new ManualClock(null);
    clock.offsetMs = offsetMs;
    return clock;
  }

  override now(): Date {
    return new Date(this.nowMs());
  }

  override nowMs(): number {
    return this.frozenAt ?? Date.now() + this.offsetMs;
  }

  advance(ms: number): void {
    if (this.frozenAt === null) this.offsetMs += ms;
    else this.frozenAt += ms;
  }
}
