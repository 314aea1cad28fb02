/**
 * How urgent a schedule's runs are within its tenant: waiting `high` runs are admitted before
 * `normal` and `low` ones, and a share of the fleet's slots is kept for `high` runs. Stored as a
 * rank (0 first) so the waiting list is one index in admission order.
 */
export const RUN_PRIORITIES = ['high', 'normal', 'low'] as const;
export type RunPriority = (typeof RUN_PRIORITIES)[number];

export function priorityRank(priority: RunPriority): number {
  return RUN_PRIORITIES.indexOf(priority);
}

export function priorityOfRank(rank: number): RunPriority {
  return RUN_PRIORITIES[rank] ?? 'normal';
}
