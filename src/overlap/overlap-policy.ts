/**
 * A schedule's overlap policy, the one home of its rule: what happens to a run of a schedule
 * while another run of it is active. The poller's plan, the claim and the hand-over when a run
 * ends all ask these functions; nothing else decides it.
 *
 * - `skip`: the newer run is recorded SKIPPED with reason `overlap`.
 * - `buffer_one`: one newer run waits (QUEUED, `waiting_for_previous`, no queue job) and is
 *   handed its job when the active run ends; any further one is skipped.
 * - `allow`: runs overlap freely.
 */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'allow'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** Policies under which two runs of one schedule may be RUNNING at once (for SQL: `= ANY`). */
export const CONCURRENT_POLICIES: readonly OverlapPolicy[] = ['allow'];

export function allowsConcurrentRuns(policy: OverlapPolicy): boolean {
  return CONCURRENT_POLICIES.includes(policy);
}

/** Per schedule, what the plan needs to know about its runs. */
export interface ActiveRuns {
  /** The schedule has a QUEUED (not waiting), RUNNING or RETRY_WAIT run. */
  active: boolean;
  /** Runs waiting for the active one to end. */
  waiting: number;
}

/**
 * At plan time, a new run of a schedule: `queue` it (with its job), make it `wait` behind the
 * active one, or `skip` it. Catch-up runs of one entry always queue behind each other, whatever
 * the policy but `allow`, so a restart never becomes a storm.
 */
export function planNewRun(
  policy: OverlapPolicy,
  runs: ActiveRuns,
  catchUp: boolean,
): 'queue' | 'wait' | 'skip' {
  if (allowsConcurrentRuns(policy) || !runs.active) return 'queue';
  if (catchUp || (policy === 'buffer_one' && runs.waiting === 0)) return 'wait';
  return 'skip';
}

/**
 * At claim, a run found another of its schedule RUNNING: a QUEUED run is skipped (`skip`) or
 * made to wait for the hand-over (`buffer_one`); a run waiting to retry is tried again shortly.
 */
export function claimBlockedByOverlap(
  policy: OverlapPolicy,
  state: 'QUEUED' | 'RETRY_WAIT',
): 'skip' | 'wait' | 'retry_later' {
  if (state === 'QUEUED' && policy === 'skip') return 'skip';
  if (state === 'QUEUED' && policy === 'buffer_one') return 'wait';
  return 'retry_later';
}

/**
 * A run of the schedule ended (or left the queue for good): does the oldest waiting run get its
 * job now? Only under `buffer_one`, and not when the run that ended was itself a waiting one
 * (it never held the turn).
 */
export function handsOverWhenEnded(policy: OverlapPolicy, endedWhileWaiting: boolean): boolean {
  return policy === 'buffer_one' && !endedWhileWaiting;
}
