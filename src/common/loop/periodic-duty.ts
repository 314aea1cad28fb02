import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { errorSummary } from '../error-summary';
import { PeriodicLoop } from './periodic-loop';

/**
 * A role's duty that runs in rounds: its `round` runs every `intervalMs` from bootstrap, never
 * two at once, a failed round is logged and the next one comes, and shutdown waits for the round
 * in flight. Any number of replicas may run a duty: each round's work is guarded in the database.
 */
export abstract class PeriodicDuty implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly loop: PeriodicLoop;

  protected constructor(name: string, intervalMs: () => number) {
    const logger = new Logger(name);
    this.loop = new PeriodicLoop(
      async () => {
        await this.round();
      },
      intervalMs,
      (error) => logger.error({ err: errorSummary(error) }, `${name} round failed`),
    );
  }

  protected abstract round(): Promise<unknown>;

  /** False once shutdown began: a round that loops should stop early. */
  protected isRunning(): boolean {
    return this.loop.isRunning();
  }

  /** Runs the next round now instead of after the interval (e.g. a slot freed up). */
  protected wake(): void {
    this.loop.wake();
  }

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
