import { Injectable } from '@nestjs/common';

/**
 * The process clock, injected so tests can move time. It never decides due-ness: that is the
 * database's now(), so replicas with skewed clocks cannot dispatch early.
 */
@Injectable()
export class Clock {
  now(): Date {
    return new Date();
  }

  nowMs(): number {
    return Date.now();
  }
}
