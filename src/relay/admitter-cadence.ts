/**
 * How long the admitter pauses between rounds. While runs wait it comes back every
 * ADMISSION_INTERVAL_MS (admission of what frees is that prompt); after a round that found none
 * it waits ADMISSION_IDLE_INTERVAL_MS instead, since a round that finds nothing is still a
 * statement and a turn of the event loop, twenty times a second on every relay of an idle
 * service. A decision in this process that new runs wait (a poller's batch, a manual trigger)
 * wakes a resting admitter and keeps it at the active pace for `holdMs`: the decision precedes the
 * commit that makes the runs visible, so the round it wakes may not see them yet.
 */
export class AdmitterCadence {
  private idle = false;
  private activeUntil = -Infinity;

  constructor(
    private readonly activeMs: number,
    private readonly idleMs: number,
    private readonly holdMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A round ended, having found `tenantsWaiting` tenants with runs waiting. */
  roundEnded(tenantsWaiting: number): void {
    this.idle = tenantsWaiting === 0;
  }

  /**
   * This process decided that new runs wait. True when the admitter was resting (its next round
   * an idle pause away), so it must be woken; at the active pace its next round comes soon
   * enough, and a wake-up per deciding batch (a flood's backlog writes one every few tens of ms)
   * would only add rounds.
   */
  waitingDecided(): boolean {
    const resting = this.pauseMs() === this.idleMs;
    this.activeUntil = this.now() + this.holdMs;
    return resting;
  }

  /** The pause before the next round. */
  pauseMs(): number {
    return this.idle && this.now() >= this.activeUntil ? this.idleMs : this.activeMs;
  }
}
