/** A tenant asking for worker slots: what it holds now, its weight, and how many more it could use. */
export interface SlotDemand {
  tenantId: string;
  weight: number;
  /** Runs of the tenant holding a slot or a place in the queue (RUNNING, admitted QUEUED). */
  holding: number;
  /** At most this many more (its own budget and waiting runs allow no more). */
  wants: number;
}

/**
 * Weighted max-min fair share of `free` places among tenants: the tenants' holdings are filled up
 * to a common level in proportion to their weights (a tenant of weight 2 is brought to twice the
 * holding of a tenant of weight 1), none beyond what it wants. Three saturating tenants of
 * weights 1, 1, 2 so converge to 25 / 25 / 50 % of the slots; a tenant holding little (a quiet
 * one beside floods) is served first. Every place is given while some tenant still wants one.
 * Pure; deterministic for the same input (ties go by tenant id).
 */
export function shareFleet(demands: readonly SlotDemand[], free: number): Map<string, number> {
  const shares = new Map<string, number>(demands.map((d) => [d.tenantId, 0]));
  const wanting = demands.filter((d) => d.wants > 0 && d.weight > 0);
  const total = wanting.reduce((sum, d) => sum + d.wants, 0);
  if (free <= 0 || wanting.length === 0) return shares;
  if (total <= free) {
    for (const d of wanting) shares.set(d.tenantId, d.wants);
    return shares;
  }
  // The water level: the largest holding-per-weight up to which everyone can be filled.
  const filled = (level: number) =>
    wanting.reduce((sum, d) => sum + clamp(level * d.weight - d.holding, 0, d.wants), 0);
  let low = 0;
  let high = Math.max(...wanting.map((d) => (d.holding + d.wants) / d.weight));
  for (let i = 0; i < 60 && high - low > 1e-9; i++) {
    const mid = (low + high) / 2;
    if (filled(mid) <= free) low = mid;
    else high = mid;
  }
  let given = 0;
  for (const d of wanting) {
    const share = Math.floor(clamp(low * d.weight - d.holding, 0, d.wants));
    shares.set(d.tenantId, share);
    given += share;
  }
  // What the rounding left goes one by one to the tenants furthest below the level.
  const behind = (d: SlotDemand) => (d.holding + (shares.get(d.tenantId) ?? 0)) / d.weight;
  while (given < free) {
    let next: SlotDemand | null = null;
    for (const d of wanting) {
      if ((shares.get(d.tenantId) ?? 0) >= d.wants) continue;
      if (
        next === null ||
        behind(d) < behind(next) ||
        (behind(d) === behind(next) && d.tenantId < next.tenantId)
      ) {
        next = d;
      }
    }
    if (next === null) break;
    shares.set(next.tenantId, (shares.get(next.tenantId) ?? 0) + 1);
    given++;
  }
  return shares;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}
