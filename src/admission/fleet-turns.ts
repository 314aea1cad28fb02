import type { SlotDemand } from './fleet-share';

/**
 * The admitter's memory of how much of the saturated fleet each tenant has been given, as a
 * virtual time per tenant (start-time fair queueing): a tenant's clock advances by 1 / weight
 * for every run it is admitted through the fleet's room. Shares are then decided by these
 * clocks rather than by what tenants hold at the moment, which is near nothing when calls are
 * short: over many rounds, tenants of weights 1, 1, 2 are admitted 25 / 25 / 50 % of the runs.
 * A tenant that was idle starts level with the least-served waiting tenant (it banks no credit
 * for its idle time), so a quiet tenant is served within one turn but never starves others.
 * In-process only: each relay keeps its own (an approximation when several relays admit).
 */
export class FleetTurns {
  private readonly clocks = new Map<string, number>();

  constructor(private readonly capacity = 10_000) {}

  /**
   * The demands as shareFleet should see them: each tenant's holding replaced by its clock
   * times its weight (so the water level is the clocks' level).
   */
  weigh(demands: readonly SlotDemand[]): SlotDemand[] {
    const wanting = demands.filter((d) => d.wants > 0);
    const known = wanting
      .map((d) => this.clocks.get(d.tenantId))
      .filter((c): c is number => c !== undefined);
    const floor = known.length > 0 ? Math.min(...known) : 0;
    return demands.map((d) => {
      const clock = Math.max(this.clocks.get(d.tenantId) ?? floor, floor);
      return { ...d, holding: clock * d.weight };
    });
  }

  /** Advances the clocks of the tenants that were admitted runs through the fleet's room. */
  served(demands: readonly SlotDemand[], admitted: ReadonlyMap<string, number>): void {
    for (const d of this.weigh(demands)) {
      const n = admitted.get(d.tenantId) ?? 0;
      this.clocks.set(d.tenantId, d.holding / d.weight + n / d.weight);
    }
    if (this.clocks.size > this.capacity) this.forgetIdle(new Set(demands.map((d) => d.tenantId)));
  }

  /** Tenants not in this round's demands are forgotten once the memory is full. */
  private forgetIdle(active: ReadonlySet<string>): void {
    for (const tenantId of this.clocks.keys()) {
      if (!active.has(tenantId)) this.clocks.delete(tenantId);
    }
  }
}
