/**
 * Runs `tick` repeatedly with a pause between runs, never two at once. `stop()` resolves once
 * the tick in flight (if any) has finished, which is what graceful shutdown needs. A tick that
 * throws is reported and the loop goes on: one bad tick must not stop a role.
 */
export class PeriodicLoop {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private running = false;

  constructor(
    private readonly tick: () => Promise<void>,
    private readonly intervalMs: () => number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.schedule(0);
  }

  /** Runs the next tick now instead of waiting out the interval (e.g. on a wake-up signal). */
  wake(): void {
    if (!this.running || this.inFlight) return;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.inFlight;
  }

  isRunning(): boolean {
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.run(), delayMs);
  }

  private async run(): Promise<void> {
    this.timer = null;
    if (!this.running) return;
    this.inFlight = this.tick().catch(this.onError);
    await this.inFlight;
    this.inFlight = null;
    if (this.running) this.schedule(this.intervalMs());
  }
}
