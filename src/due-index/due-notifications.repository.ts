import { Inject, Injectable, Logger } from '@nestjs/common';
import { errorSummary } from '../common';
import { APP_CONFIG, type AppConfig } from '../config';
import { PrimaryClient, PrimaryLocator, urlFor } from '../database';
import { DUE_CHANNEL } from './due-index.sql';

/** Opens the poller's LISTEN connection for new due-index entries (INSERT_DUE_ENTRIES notifies). */
@Injectable()
export class DueNotificationsRepository {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(PrimaryLocator) private readonly locator: PrimaryLocator,
  ) {}

  listen(onWake: () => void): DueListener {
    if (!this.config.databaseUrl) throw new Error('no database URL to listen on');
    return new DueListener(this.locator, this.config.database.connectTimeoutMs, onWake);
  }
}

/**
 * A dedicated connection LISTENing for new due-index entries, so a schedule created due in a
 * second wakes the poller at once instead of at its next idle check. Best effort: the poller
 * also wakes on its own timer, so a lost connection only costs latency; it reconnects, to the
 * primary the locator finds (after a failover, the new one: NOTIFY is sent on the primary only).
 */
export class DueListener {
  private readonly logger = new Logger(DueListener.name);
  private client: PrimaryClient | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(
    private readonly locator: PrimaryLocator,
    private readonly connectTimeoutMs: number,
    private readonly onWake: () => void,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new PrimaryClient({
      connectionString: urlFor(this.locator.address, this.locator.address.hosts[0]),
      application_name: 'dueline-poller-listen',
      connectionTimeoutMillis: this.connectTimeoutMs,
      primaryLocator: this.locator,
    });
    client.on('notification', () => this.onWake());
    client.on('error', (error) => {
      this.logger.warn({ err: errorSummary(error) }, 'due listener connection lost; reconnecting');
      this.reconnectSoon(client);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${DUE_CHANNEL}`);
      if (this.stopped) return void (await client.end());
      this.client = client;
      this.onWake(); // anything written while we were not listening
    } catch (error) {
      this.logger.warn({ err: errorSummary(error) }, 'due listener could not connect; retrying');
      this.reconnectSoon(client);
    }
  }

  private reconnectSoon(client: PrimaryClient): void {
    void client.end().catch(() => undefined);
    if (this.client === client) this.client = null;
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = null;
      if (!this.stopped) void this.connect();
    }, 1000);
    this.retry.unref();
  }
}
