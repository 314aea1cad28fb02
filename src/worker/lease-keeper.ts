import { performance } from 'node:perf_hooks';
import type { HeartbeatResult } from '../execution';

export interface LeaseKeeperOptions {
  /** performance.now() when the claim was sent: the lease cannot have started before. */
  claimSentAt: number;
  heartbeat: () => Promise<HeartbeatResult>;
  intervalMs: number;
  leaseMs: number;
  onError: (error: unknown) => void;
}

/**
 * Renews a claimed run's lease while its attempt runs, and aborts the attempt (through `signal`)
 * when the lease is lost or cancellation is requested. "Lost" is either the database saying so
 * (the fence moved on) or, when heartbeats cannot get through, the lease running out by this
 * process's own clock: past that point another worker may hold the run.
 */
export class LeaseKeeper {
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;
  /** Local monotonic time until which the last confirmed lease certainly holds. */
  private heldUntil: number;
  private state: 'held' | 'lost' | 'cancel_requested' = 'held';

  constructor(private readonly options: LeaseKeeperOptions) {
    this.heldUntil = options.claimSentAt + options.leaseMs;
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get lost(): boolean {
    return this.state === 'lost';
  }

  get cancelRequested(): boolean {
    return this.state === 'cancel_requested';
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
  }

  private tick(): void {
    if (this.state !== 'held') return;
    if (performance.now() > this.heldUntil) return this.abort('lost');
    if (this.beating) return;
    this.beating = this.beat().finally(() => {
      this.beating = null;
    });
  }

  private async beat(): Promise<void> {
    const sentAt = performance.now();
    try {
      const result = await this.options.heartbeat();
      if (!result.held) return this.abort('lost');
      this.heldUntil = sentAt + this.options.leaseMs;
      if (result.cancelRequested) return this.abort('cancel_requested');
    } catch (error) {
      this.options.onError(error);
    }
  }

  private abort(state: 'lost' | 'cancel_requested'): void {
    if (this.state !== 'held') return;
    this.state = state;
    this.controller.abort(state === 'lost' ? 'lease lost' : 'cancellation requested');
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
