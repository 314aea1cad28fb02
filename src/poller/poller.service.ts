import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  OnApplicationBootstrap,
} from '@nestjs/common';
import { Clock, errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import {
  DueNotificationsRepository,
  POLLER_MAX_SLEEP_MS,
  ShardLeasesRepository,
  type DueListener,
} from '../due-index';
import { Lifecycle } from '../observability';
import { DueDispatcher, type DispatchResult } from './due-dispatcher';
import { backlogBatchSize, backlogPauseMs } from './backlog-pause';
import { CROWDED_WINDOW_MS, CrowdedInstantLane } from './crowded-instant-lane';
import { FRESH_LANE_BATCH, FreshLane } from './fresh-lane';

/** The longest the poller sleeps without looking at the index (see WAKE_HORIZON_MS). */
const MAX_IDLE_MS = POLLER_MAX_SLEEP_MS;
/** Batches prepared ahead and waiting for their instants at once (each holds a connection). */
const MAX_WAITING_BATCHES = 3;
/** Retry pause after a failed round (e.g. the database is away). */
const ERROR_BACKOFF_MS = 1000;
/** Entries the crowded-instant lane's look reads at most (see NEXT_CROWDED_INSTANT). */
const CROWDED_LOOK_READ_LIMIT = 5000;
/** The crowded-instant lane's least lead over the rounds' own lookahead, ms. */
const CROWDED_LEAD_MARGIN_MS = 30;

/**
 * The poller role: holds a fair share of the 128 shards by renewable lease, dispatches their due
 * entries as soon as the database clock says they are due, and sleeps until the next due
 * instant (corrected for clock skew), a NOTIFY about a new entry, or the next lease renewal.
 */
@Injectable()
export class PollerService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(PollerService.name);
  readonly pollerId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private owned: number[] = [];
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private wakeRequested = false;
  private skewMs = 0;
  /** When the next lease round is due (local clock, ms). */
  private nextLeaseRound = 0;
  private readonly listener: DueListener;
  private readonly freshLane: FreshLane;
  /** Null when POLLER_CROWDED_INSTANT_ENTRIES is 0. */
  private readonly crowdedLane: CrowdedInstantLane | null;
  /**
   * The size of the rounds' next batch that takes entries, when the crowded lane's last batch
   * was a full one of a throttled flood (see backlogBatchSize): the rounds take what it left in
   * small batches, as after a batch of their own.
   */
  private backlogSizeAfterLane: number | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly leases: ShardLeasesRepository,
    private readonly dispatcher: DueDispatcher,
    private readonly lifecycle: Lifecycle,
    private readonly clock: Clock,
    notifications: DueNotificationsRepository,
  ) {
    this.listener = notifications.listen(() => this.signal());
    this.freshLane = new FreshLane(
      {
        nextDueInMs: (after, prepared) =>
          this.dispatcher.nextFreshDueInMs(this.owned, after, prepared),
        serve: async (after, prepared, onWaiting) => {
          const result = await this.dispatcher.dispatch(this.owned, FRESH_LANE_BATCH, {
            freshAfter: after,
            lookaheadMs: config.poller.lookaheadMs,
            after: prepared,
            onWaiting,
          });
          this.record(result);
          return result;
        },
      },
      config.poller.lookaheadMs,
      (error) => this.logger.error({ err: errorSummary(error) }, 'poller fresh lane failed'),
    );
    this.crowdedLane = this.crowdedInstantLane();
  }

  private crowdedInstantLane(): CrowdedInstantLane | null {
    const { crowdedInstantEntries, batchSize, lookaheadMs } = this.config.poller;
    if (crowdedInstantEntries === 0) return null;
    return new CrowdedInstantLane(
      {
        next: (excluding) =>
          this.dispatcher.nextCrowdedInstant(this.owned, {
            withinMs: CROWDED_WINDOW_MS,
            minEntries: crowdedInstantEntries,
            readLimit: CROWDED_LOOK_READ_LIMIT,
            excluding,
          }),
        serve: async (instant, hooks) => {
          const result = await this.dispatcher.dispatch(this.owned, batchSize, {
            instant,
            beforeAdmission: hooks.beforeAdmission,
            onWaiting: () => hooks.onWaiting(),
          });
          this.record(result);
          return result;
        },
        settled: (result) => {
          if (result && result.entries >= batchSize) {
            const batch = { created: result.created.length, published: result.published };
            this.backlogSizeAfterLane = backlogBatchSize(batch, batchSize);
          }
          // What the batch left of its instant (or all of it, if it failed) is due now, and the
          // rounds, which left that instant to the lane, may be asleep.
          this.wakeRounds();
        },
      },
      {
        minEntries: crowdedInstantEntries,
        batchSize,
        minLeadMs: lookaheadMs + CROWDED_LEAD_MARGIN_MS,
      },
      (error) => this.logger.error({ err: errorSummary(error) }, 'poller crowded lane failed'),
    );
  }

  async onApplicationBootstrap(): Promise<void> {
    this.running = true;
    await this.listener.start();
    this.loop = this.run();
    this.crowdedLane?.start();
    this.lifecycle.emit({ kind: 'role.started', role: 'poller' });
    this.logger.log({ pollerId: this.pollerId }, 'poller started');
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.running = false;
    this.signal();
    await Promise.all([this.loop, this.crowdedLane?.stop()]);
    await this.listener.stop();
    // Hand the shards over now rather than after the lease runs out.
    await this.leases.releaseAll(this.pollerId, this.owned).catch(() => undefined);
    this.owned = [];
    this.lifecycle.emit({ kind: 'role.stopped', role: 'poller' });
    this.logger.log({ pollerId: this.pollerId }, 'poller stopped');
  }

  isRunning(): boolean {
    return this.running;
  }

  ownedShards(): readonly number[] {
    return this.owned;
  }

  private signal(): void {
    this.wakeRounds();
    this.freshLane.wake();
    this.crowdedLane?.wake();
  }

  private wakeRounds(): void {
    this.wakeRequested = true;
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let sleepMs: number;
      try {
        await this.keepLeases();
        this.wakeRequested = false;
        await this.drain();
        sleepMs = await this.untilNextDue(this.nextLeaseRound);
      } catch (error) {
        this.logger.error({ err: errorSummary(error) }, 'poller round failed');
        sleepMs = ERROR_BACKOFF_MS;
      }
      if (this.running && !this.wakeRequested) await this.sleep(sleepMs);
    }
  }

  /**
   * A lease round when one is due (every third of the lease): between the poller's rounds, and
   * between the batches of a long drain (a throttled flood's backlog, paced, can take longer than
   * a lease), so a busy poller never lets its own shards expire under it.
   */
  private async keepLeases(): Promise<void> {
    if (this.clock.nowMs() < this.nextLeaseRound) return;
    await this.leaseRound();
    this.nextLeaseRound = this.clock.nowMs() + (this.config.poller.leaseSeconds * 1000) / 3;
  }

  private async leaseRound(): Promise<void> {
    const round = await this.leases.round(
      this.pollerId,
      this.owned,
      this.config.poller.leaseSeconds,
    );
    this.owned = round.owned;
    this.lifecycle.emit({
      kind: 'shards.held',
      pollerId: this.pollerId,
      owned: this.owned.length,
      lost: round.lost,
    });
    const before = this.clock.nowMs();
    const dbNow = (await this.dispatcher.databaseNow()).getTime();
    const after = this.clock.nowMs();
    this.skewMs = (before + after) / 2 - dbNow;
    this.lifecycle.emit({ kind: 'clock.skew', seconds: this.skewMs / 1000 });
  }

  /**
   * Dispatches until the held shards have nothing due (bounded batches, one txn each). A batch
   * prepared ahead waits in its transaction for its instant; meanwhile the next instant's batch
   * is prepared beside it (at most MAX_WAITING_BATCHES open), so a batch due a few milliseconds
   * after another is not prepared only once the first has committed. While full batches drain a
   * backlog, the fresh lane dispatches what falls due after it (see FreshLane). A throttled
   * flood's backlog follows in smaller batches with a pause after each (see backlog-pause.ts).
   */
  private async drain(): Promise<void> {
    if (this.owned.length === 0) return;
    const waiting = new Set<Promise<void>>();
    let failure: unknown = null;
    let after: string | null = null;
    let size = this.backlogSizeAfterLane ?? this.config.poller.batchSize;
    try {
      for (let batches = 0; this.running && batches < 100 && failure === null; batches++) {
        // Renewed only while no batch waits for its instant, so the shards a lease round may
        // hand over are never those of an open batch.
        if (waiting.size === 0) {
          await this.keepLeases();
          if (this.owned.length === 0) return;
        }
        let startedWaiting!: (batch: { instant: string; full: boolean }) => void;
        const prepared = new Promise<{ instant: string; full: boolean }>(
          (resolve) => (startedWaiting = resolve),
        );
        const startedAt = performance.now();
        const dispatching = this.dispatcher.dispatch(this.owned, size, {
          lookaheadMs: this.config.poller.lookaheadMs,
          after,
          crowded: this.crowdedLane?.preparing?.exact ?? null,
          onWaiting: (batch) => startedWaiting(batch),
        });
        const outcome = await Promise.race([
          dispatching.then((result) => ({ result, ahead: null })),
          prepared.then((ahead) => ({ result: null, ahead })),
        ]);
        if (outcome.result) {
          this.record(outcome.result);
          if (outcome.result.entries > 0) this.backlogSizeAfterLane = null;
          if (outcome.result.entries < size) return;
          size = await this.paceBacklog(outcome.result, performance.now() - startedAt);
          continue;
        }
        this.backlogSizeAfterLane = null; // prepared ahead: it took entries
        if (outcome.ahead.full) {
          // More entries of the same instant remain: they follow once this batch has committed.
          const result = await dispatching;
          this.record(result);
          after = null;
          size = await this.paceBacklog(result, performance.now() - startedAt);
          continue;
        }
        const settled: Promise<void> = dispatching
          .then((result) => this.record(result))
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => waiting.delete(settled));
        waiting.add(settled);
        if (waiting.size >= MAX_WAITING_BATCHES) await Promise.race(waiting);
        after = outcome.ahead.instant;
      }
    } finally {
      await Promise.all([...waiting, this.freshLane.stop()]);
    }
    // A waiting batch that failed: its entries stay due for the next round.
    if (failure !== null) throw failure;
  }

  /**
   * After a full backlog batch: the fresh lane follows past it, and a throttled flood's batch is
   * followed by a pause and smaller batches, room for everyone else (see backlog-pause.ts).
   * Returns the size of the next batch.
   */
  private async paceBacklog(result: DispatchResult, tookMs: number): Promise<number> {
    this.followBacklog(result);
    const batch = { created: result.created.length, published: result.published };
    const ms = backlogPauseMs(batch, tookMs);
    if (ms > 0) await new Promise((resolve) => setTimeout(resolve, ms));
    return backlogBatchSize(batch, this.config.poller.batchSize);
  }

  private followBacklog(result: DispatchResult): void {
    if (result.lastDueAtExact !== null) this.freshLane.follow(result.lastDueAtExact);
  }

  private record(result: DispatchResult): void {
    if (result.now === null) return; // took nothing
    this.lifecycle.emit({
      kind: 'dispatch.committed',
      at: result.now,
      created: result.created,
      dropped: result.dropped,
    });
  }

  /**
   * How long to sleep: until the lookahead before the next due instant on the local clock,
   * corrected for skew (the batch is then prepared ahead and committed at the instant).
   */
  private async untilNextDue(nextLeaseRound: number): Promise<number> {
    const now = this.clock.nowMs();
    const next = await this.dispatcher.nextDue(this.owned);
    // The instant the crowded lane is preparing is left out of the rounds' batches while the
    // lane holds it: the lane wakes the rounds when it lets go, for whatever its batch left.
    const crowded = this.crowdedLane?.preparing ?? null;
    const lanesOwn = next !== null && crowded !== null && crowded.at.getTime() === next.getTime();
    const dueLocal = next && !lanesOwn ? next.getTime() + this.skewMs : Infinity;
    this.lifecycle.emit({
      kind: 'due.oldest_age',
      seconds: next && dueLocal < now ? (now - dueLocal) / 1000 : 0,
    });
    const prepareAt = dueLocal - this.config.poller.lookaheadMs;
    // Within reach already but not by the database's clock yet (skew, rounding): look again
    // very soon.
    const untilDue = prepareAt <= now ? 2 : prepareAt - now;
    return Math.max(1, Math.min(untilDue, nextLeaseRound - now, MAX_IDLE_MS));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = () => {
        this.wake = null;
        done();
      };
    });
  }
}
