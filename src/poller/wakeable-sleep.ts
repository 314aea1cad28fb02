/**
 * A lane's sleep between looks that `wake()` ends early (a NOTIFY about new entries, a stop).
 * One sleeper at a time: a lane sleeps in its own loop only.
 */
export class WakeableSleep {
  private wakeUp: (() => void) | null = null;

  /** Sleeps `ms`, or until wake(), whichever comes first. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        if (this.wakeUp === done) this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, Math.max(1, Math.ceil(ms)));
      this.wakeUp = done;
    });
  }

  wake(): void {
    this.wakeUp?.();
  }
}
