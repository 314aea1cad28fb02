import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, errorSummary, PeriodicDuty } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { invokeTarget } from '../delivery';
import { EventsService, type ClaimedEvent } from '../events';
import { TargetsService, type DispatchTarget } from '../targets';
import { TargetCredentials } from './target-credentials';

/** How often (at most) one process prunes finished events, and how many per prune. */
const PRUNE_EVERY_MS = 10_000;
const PRUNE_BATCH = 1_000;

/**
 * The worker role's event lane: delivers the event outbox to the subscriptions' targets through
 * the same signed path as runs (Standard Webhooks headers with the target's active secrets,
 * webhook-id = the event id, its auth, the address policy), at most EVENT_DELIVERY_CONCURRENCY
 * calls in flight and never in the run slots, so a slow or failing subscriber never slows a
 * run. Each delivery is claimed under a lease: a process that dies mid-call leaves it to come
 * due again (at least once; receivers deduplicate by webhook-id). A failed call is retried with
 * a doubling backoff up to EVENT_DELIVERY_MAX_ATTEMPTS, then given up.
 */
@Injectable()
export class EventDeliverer extends PeriodicDuty {
  private readonly logger = new Logger(EventDeliverer.name);
  private readonly inFlight = new Set<Promise<void>>();
  private prunedAt = -Infinity;

  constructor(
    private readonly events: EventsService,
    private readonly targets: TargetsService,
    private readonly credentials: TargetCredentials,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super(EventDeliverer.name, () => config.events.intervalMs);
  }

  override async beforeApplicationShutdown(): Promise<void> {
    await super.beforeApplicationShutdown();
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  protected round(): Promise<number> {
    return this.tick();
  }

  /**
   * One round: claims as many due deliveries as there are free slots and starts them (it does
   * not wait for them: a slot that frees wakes the next round). Prunes finished events now and
   * then. Public so tests can run a round.
   */
  async tick(): Promise<number> {
    const { events } = this.config;
    const free = events.concurrency - this.inFlight.size;
    const claimed = await this.events.claimDue(free, events.perTarget, this.leaseMs());
    // The targets of every tenant's claimed events in one read (none for an empty round).
    const targets = await this.targets
      .getForDispatch(
        claimed.map((event) => ({ tenantId: event.tenantId, targetId: event.targetId })),
      )
      .catch((error: unknown) => new Error(errorSummary(error).message));
    for (const event of claimed) {
      // Unreadable targets: nothing was sent, the attempt is retried like a failed call.
      const target =
        targets instanceof Error
          ? `the target could not be loaded: ${targets.message}`
          : (targets.of(event.tenantId, event.targetId) ?? undefined);
      this.track(this.deliver(event, target));
    }
    const now = this.clock.nowMs();
    if (now - this.prunedAt >= PRUNE_EVERY_MS) {
      this.prunedAt = now;
      await this.events.pruneFinished(events.retentionSeconds, PRUNE_BATCH);
    }
    return claimed.length;
  }

  /** Resolves when every delivery in flight has written its outcome. */
  async drain(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** A delivery holds its row this long: its call's bound, its credentials', and a margin. */
  private leaseMs(): number {
    return 2 * this.config.events.timeoutMs + 10_000;
  }

  private track(delivery: Promise<void>): void {
    const tracked = delivery
      .catch((error: unknown) =>
        this.logger.error({ err: errorSummary(error) }, 'event delivery failed unexpectedly'),
      )
      .finally(() => {
        this.inFlight.delete(tracked);
        this.wake();
      });
    this.inFlight.add(tracked);
  }

  private async deliver(
    event: ClaimedEvent,
    target: DispatchTarget | string | undefined,
  ): Promise<void> {
    const error = await this.call(event, target);
    if (error === null) {
      await this.events.delivered(event);
      return;
    }
    const { maxAttempts } = this.config.events;
    const retryInMs = event.attempt >= maxAttempts ? null : this.backoffMs(event.attempt);
    await this.events.failed(event, error, retryInMs);
    if (retryInMs === null) {
      this.logger.warn(
        { tenantId: event.tenantId, eventId: event.id, type: event.type, attempts: event.attempt },
        'event given up after its last attempt',
      );
    }
  }

  /** Null when the target answered 2xx; else why not (kept on the event, never a secret). */
  private async call(
    event: ClaimedEvent,
    target: DispatchTarget | string | undefined,
  ): Promise<string | null> {
    if (typeof target === 'string') return target;
    if (!target) return `target ${event.targetId} no longer exists`;
    if (target.status !== 'active') return `target ${target.id} is disabled`;
    let credentials: Record<string, string>;
    try {
      credentials = await this.credentials.headersFor(target, {
        tenantId: event.tenantId,
        eventId: event.id,
      });
    } catch (error) {
      return `request not sent: could not obtain credentials: ${errorSummary(error).message}`;
    }
    const response = await invokeTarget(
      {
        url: target.url,
        method: target.method,
        headers: target.headers,
        timeoutMs: Math.min(target.timeoutMs, this.config.events.timeoutMs),
        body: { type: event.type, timestamp: event.occurredAt.toISOString(), data: event.data },
        signingSecrets: target.signingSecrets,
        idempotencyKey: event.id,
        webhookId: event.id,
        credentials,
      },
      {
        allowed: this.config.targetAllowedHosts,
        now: () => this.clock.nowMs(),
        maxBodySnippetBytes: 256,
      },
    );
    if (response.kind !== 'response') return response.error;
    if (response.status >= 200 && response.status < 300) return null;
    return `answered ${response.status}`;
  }

  /** Doubling from the first delay, capped, with up to 20 % jitter so retries spread out. */
  private backoffMs(attempt: number): number {
    const { retryInitialDelayMs, retryMaxDelayMs } = this.config.events;
    const base = Math.min(retryMaxDelayMs, retryInitialDelayMs * 2 ** Math.min(attempt - 1, 30));
    return Math.max(1, Math.round(base * (1 - 0.2 * Math.random())));
  }
}
