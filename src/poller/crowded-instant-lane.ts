import { performance } from 'node:perf_hooks';
import type { CrowdedInstant } from '../due-index';
import type { DispatchResult } from './due-dispatcher';
import { INITIAL_MS_PER_ENTRY, PreparationLead } from './preparation-lead';
import { WakeableSleep } from './wakeable-sleep';

/** How far ahead the lane looks for a crowded instant (and the longest lead it takes), ms. */
export const CROWDED_WINDOW_MS = 1000;
/** Between looks while entries are due within the window, ms. */
const LOOK_MS = 100;
/** Between looks while none is (a NOTIFY about a new entry wakes the lane sooner), ms. */
const IDLE_LOOK_MS = 250;
/** After a failed look or batch (the database away): the poller's own rounds go on. */
const ERROR_PAUSE_MS = 1000;
/** Instants the lane served lately, left out of its looks (their rest is the poller's). */
const SERVED_KEPT = 4;

/** What the lane needs of the poller: a look ahead, and a dispatch of one instant's batch. */
export interface CrowdedInstantDispatch {
  /**
   * The earliest instant ahead within CROWDED_WINDOW_MS that the most entries share first
   * (crowded ones before the rest), `excluding` left out; null when no entry is due within it.
   */
  next(excluding: readonly string[]): Promise<CrowdedInstant | null>;
  /**
   * One transaction over the entries due at exactly `instant`, committed once the database
   * clock reaches it: `beforeAdmission` is awaited before its tenants' permit locks are taken,
   * and `onWaiting` is called when it is prepared ahead and starts waiting.
   */
  serve(
    instant: string,
    hooks: { beforeAdmission: () => Promise<void>; onWaiting: () => void },
  ): Promise<DispatchResult>;
  /** The lane has let go of an instant (its batch committed or failed): the rest is due. */
  settled(result: DispatchResult | null): void;
}

export interface CrowdedInstantSettings {
  /** Entries an instant needs for the lane to prepare it. */
  minEntries: number;
  /**
   * Entries one batch of the lane takes (the poller's batch size): the rest of a larger instant
   * is the rounds', which follow a throttled flood's batch with smaller ones as after their own.
   */
  batchSize: number;
  /** The least lead: more than the poller's own lookahead, so the lane's batch comes first. */
  minLeadMs: number;
}

/**
 * The poller's crowded-instant lane. Many schedules firing at one instant (a minute boundary,
 * a cron second shared by thousands) make a batch that takes a hundred milliseconds or more to
 * prepare. The poller's own rounds prepare a batch only `POLLER_LOOKAHEAD_MS` ahead, and only
 * once nothing earlier is due: a steady trickle of other entries before the instant keeps them
 * busy up to it, so the crowd was prepared after its instant and committed late. The lane looks
 * ahead instead, and starts the crowd's batch early enough to be ready at the instant (the
 * PreparationLead, measured on its own batches), in a transaction of its own beside the poller's
 * rounds; the batch commits only once the database clock reaches the instant, as every batch
 * prepared ahead does, so nothing is visible early. SKIP LOCKED keeps the lane's entries and the
 * rounds' disjoint, and the rounds leave the lane's instant alone while it prepares it (see
 * `preparing`); once it lets go, they take what its batch left of the instant.
 *
 * Its batch takes its tenants' permit locks at admission and holds them to the commit, as any
 * batch prepared ahead does: another batch of those tenants (the rounds' next one) waits for
 * them. So the batch waits before its admission until the part of the lead that admission and
 * what follows it take (a second PreparationLead, measured the same way), and holds the locks
 * only for that part, not for the whole lead.
 */
export class CrowdedInstantLane {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly pause = new WakeableSleep();
  private current: CrowdedInstant | null = null;
  private readonly served: string[] = [];
  private readonly lead: PreparationLead;
  /** The same for the part of a batch from its admission on (which holds the permit locks). */
  private readonly admissionLead: PreparationLead;

  constructor(
    private readonly dispatch: CrowdedInstantDispatch,
    private readonly settings: CrowdedInstantSettings,
    private readonly failed: (error: unknown) => void,
  ) {
    this.lead = new PreparationLead(settings.minLeadMs, CROWDED_WINDOW_MS);
    // Until a batch has been measured, its admission onwards is assumed to cost twice the
    // default a whole batch is: the whole lead has a floor (minLeadMs) for a busy machine, this
    // part has none, and at the default a first crowd of 150 was ready only ~75 ms before its
    // instant on an idle bench host (~190 ms at twice; on a loaded one, after it either way).
    // Measured batches then take over: locks held longer for the first batches only.
    this.admissionLead = new PreparationLead(0, CROWDED_WINDOW_MS, 2 * INITIAL_MS_PER_ENTRY);
  }

  /** The instant a batch of the lane is preparing or waiting for, until it commits. */
  get preparing(): CrowdedInstant | null {
    return this.current;
  }

  start(): void {
    this.running = true;
    this.loop ??= this.run().finally(() => (this.loop = null));
  }

  /** New entries may be due soon (a NOTIFY): look again now. */
  wake(): void {
    this.pause.wake();
  }

  /** Ends the lane after its current batch (which commits at its instant). */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        const next = await this.dispatch.next(this.served);
        if (!this.running) break;
        if (next === null) {
          await this.pause.sleep(IDLE_LOOK_MS);
          continue;
        }
        const entries = Math.min(next.entries, this.settings.batchSize);
        const leadMs = this.lead.msFor(entries);
        if (next.entries < this.settings.minEntries || next.inMs > leadMs) {
          const untilLead = next.entries < this.settings.minEntries ? LOOK_MS : next.inMs - leadMs;
          await this.pause.sleep(Math.min(untilLead, LOOK_MS));
          continue;
        }
        await this.serve(next, performance.now() + next.inMs, entries);
      } catch (error) {
        this.failed(error);
        await this.pause.sleep(ERROR_PAUSE_MS);
      }
    }
  }

  /** One batch of `instant`, due at `dueAt` (performance.now() time), of about `entries`. */
  private async serve(instant: CrowdedInstant, dueAt: number, entries: number): Promise<void> {
    this.current = instant;
    const startedAt = performance.now();
    // The batch's own work before admission, and the moment admission began (after the wait).
    let beforeAdmissionMs: number | null = null;
    let admittingAt: number | null = null;
    let preparedAt: number | null = null;
    let result: DispatchResult | null = null;
    try {
      result = await this.dispatch.serve(instant.exact, {
        beforeAdmission: async () => {
          beforeAdmissionMs = performance.now() - startedAt;
          const waitMs = dueAt - this.admissionLead.msFor(entries) - performance.now();
          if (waitMs > 0) await new Promise((resolve) => setTimeout(resolve, waitMs));
          admittingAt = performance.now();
        },
        onWaiting: () => {
          preparedAt = performance.now();
        },
      });
      // Not ready by its instant: what it took until now is a lower bound.
      const endedAt = preparedAt ?? performance.now();
      if (beforeAdmissionMs !== null && admittingAt !== null) {
        const fromAdmissionMs = endedAt - admittingAt;
        this.admissionLead.observe(result.entries, fromAdmissionMs);
        this.lead.observe(result.entries, beforeAdmissionMs + fromAdmissionMs);
      }
    } finally {
      this.current = null;
      this.served.push(instant.exact);
      if (this.served.length > SERVED_KEPT) this.served.shift();
      this.dispatch.settled(result);
    }
  }
}
