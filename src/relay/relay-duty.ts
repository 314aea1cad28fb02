import { BeforeApplicationShutdown, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { errorSummary, PeriodicLoop } from '../common';

/**
 * A relay duty that runs in rounds: its `round` runs every `intervalMs` from bootstrap, never two
 * at once, a failed round is logged and the next one comes, and shutdown waits for the round in
 * flight. Any number of relays may run a duty: each round's work is guarded in the database.
 */
export abstract class RelayDuty implements OnApplicationBootstrap, BeforeApplicationShutdown {
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

  onApplicationBootstrap(): void {
    this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
