import { ApiClient, mapLimit, Tenant } from './api-client';
import type { ExpectedOccurrence } from './analysis';
import { seedSchedules } from './seed-sql';

/**
 * The steady load: recurring 6-field cron schedules plus one-time jobs, together firing `rate`
 * occurrences per second.
 *
 * - Cron: `cronShare` of the rate. Schedule i fires every `period` seconds at second offset
 *   i mod period (`o/period * * * * *`, UTC), so each second carries the same number of cron
 *   occurrences and every instant is a whole second (the minute-boundary pile-up is the burst
 *   scenario's job, not this one's).
 * - One-time: the rest of the rate, each at a random millisecond within its second, created
 *   through the API while the run goes on, `leadSeconds` before they are due, as clients would.
 *
 * Expected instants are computed here by arithmetic, independently of the service's recurrence
 * engine: for `o/P` with P dividing 60, the instants are the epoch seconds s with s mod P = o.
 */
export interface SteadyOptions {
  rate: number;
  seconds: number;
  cronShare: number;
  periodSeconds: number;
  leadSeconds: number;
  /** Parallel API calls while seeding and feeding. */
  concurrency: number;
}

export const DEFAULT_STEADY: Omit<SteadyOptions, 'rate' | 'seconds'> = {
  cronShare: 0.75,
  periodSeconds: 10,
  leadSeconds: 5,
  concurrency: 16,
};

interface CronSchedule {
  id: string;
  offset: number;
}

export interface FeederStats {
  created: number;
  /** One-time jobs whose creation had not completed 1 s before they were due. */
  late: number;
  /** One-time jobs the API refused (e.g. runAt already past): excluded from the expected set. */
  failed: number;
  /** Smallest margin seen between a job's 201 and its runAt, ms. */
  minLeadMs: number;
  /** The first refusal, for the report. */
  firstError?: string;
}

export class SteadyWorkload {
  private cron: CronSchedule[] = [];
  private readonly once: ExpectedOccurrence[] = [];
  readonly feeder: FeederStats = { created: 0, late: 0, failed: 0, minLeadMs: Infinity };
  private stopped = false;

  constructor(
    private readonly api: ApiClient,
    private readonly tenants: readonly Tenant[],
    readonly options: SteadyOptions,
  ) {}

  get cronSchedules(): number {
    return this.cron.length;
  }

  get cronPerSecond(): number {
    return Math.round(this.options.rate * this.options.cronShare);
  }

  get oncePerSecond(): number {
    return this.options.rate - this.cronPerSecond;
  }

  /**
   * The default: seeds everything with SQL before the window, as the API's create leaves it (see
   * seed-sql): cron schedules whose first due instant is their first second at or after
   * `windowStart`, and every one-time job of the window. The offered load then starts exactly at
   * the window and is exactly `rate`, and nothing fires while seeding.
   */
  async seedSql(url: string, windowStart: number): Promise<void> {
    const { periodSeconds: period, seconds } = this.options;
    const tenantOf = (i: number) => this.tenants[i % this.tenants.length];
    const firstAt = (offset: number) => {
      let second = Math.ceil(windowStart / 1000);
      while (second % period !== offset) second++;
      return second * 1000;
    };
    const cronIds = await seedSchedules(url, this.cronPerSecond * period, (i) => ({
      tenantId: tenantOf(i).id,
      targetId: tenantOf(i).targetId,
      cron: `${i % period}/${period} * * * * *`,
      dueAt: new Date(firstAt(i % period)),
    }));
    this.cron = cronIds.map((id, i) => ({ id, offset: i % period }));
    const perSecond = this.oncePerSecond;
    const instants = Array.from(
      { length: perSecond * seconds },
      (_, i) => windowStart + Math.floor(i / perSecond) * 1000 + Math.floor(Math.random() * 1000),
    );
    const onceIds = await seedSchedules(url, instants.length, (i) => ({
      tenantId: tenantOf(i).id,
      targetId: tenantOf(i).targetId,
      cron: null,
      dueAt: new Date(instants[i]),
    }));
    onceIds.forEach((id, i) => this.once.push({ scheduleId: id, at: instants[i] }));
  }

  /** With --via-api: creates the cron schedules through the API (before the window). */
  async seedCron(progress: (done: number, total: number) => void): Promise<void> {
    const { periodSeconds: period, concurrency } = this.options;
    const total = this.cronPerSecond * period;
    let done = 0;
    this.cron = await mapLimit(
      Array.from({ length: total }, (_, i) => i),
      concurrency,
      async (i) => {
        const offset = i % period;
        const tenant = this.tenants[i % this.tenants.length];
        const created = await this.api.createSchedule(tenant, {
          cron: `${offset}/${period} * * * * *`,
          timezone: 'UTC',
          overlapPolicy: 'allow',
          missedRunPolicy: 'all',
          maxCatchUp: 1000,
          payload: { kind: 'cron', i },
        });
        if (++done % 500 === 0 || done === total) progress(done, total);
        return { id: created.id, offset };
      },
    );
  }

  /**
   * Creates the one-time jobs of each window second `leadSeconds` before it starts, until the
   * window ends or stop() is called. Resolves when the last batch is created.
   */
  async feed(windowStart: number): Promise<void> {
    const { seconds, leadSeconds, concurrency } = this.options;
    for (let s = 0; s < seconds && !this.stopped; s++) {
      const secondStart = windowStart + s * 1000;
      await sleepUntil(secondStart - leadSeconds * 1000);
      const instants = Array.from(
        { length: this.oncePerSecond },
        () => secondStart + Math.floor(Math.random() * 1000),
      );
      // Not awaited as a whole before the next second: a slow second must not delay the next one's
      // creation schedule, but the calls stay bounded by `concurrency` per second in flight.
      void this.createOnce(instants, concurrency);
    }
    await sleepUntil(windowStart + seconds * 1000);
    await this.drainFeeder();
  }

  stop(): void {
    this.stopped = true;
  }

  /** Everything asked for with an instant inside [from, to]. */
  expected(from: number, to: number): ExpectedOccurrence[] {
    const out: ExpectedOccurrence[] = [];
    const period = this.options.periodSeconds;
    for (let second = Math.ceil(from / 1000); second * 1000 <= to; second++) {
      const offset = second % period;
      for (const schedule of this.cron) {
        if (schedule.offset === offset) out.push({ scheduleId: schedule.id, at: second * 1000 });
      }
    }
    for (const o of this.once) if (o.at >= from && o.at <= to) out.push(o);
    return out;
  }

  private inFlight = new Set<Promise<unknown>>();

  private createOnce(instants: number[], concurrency: number): Promise<unknown> {
    const work = mapLimit(instants, concurrency, async (at, i) => {
      const tenant = this.tenants[i % this.tenants.length];
      try {
        const created = await this.api.createSchedule(tenant, {
          runAt: new Date(at).toISOString(),
          payload: { kind: 'once' },
        });
        const lead = at - Date.now();
        this.feeder.created++;
        this.feeder.minLeadMs = Math.min(this.feeder.minLeadMs, lead);
        if (lead < 1000) this.feeder.late++;
        this.once.push({ scheduleId: created.id, at });
      } catch (error) {
        this.feeder.failed++;
        this.feeder.firstError ??=
          error instanceof Error ? error.message.slice(0, 300) : String(error);
      }
    });
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
    return work;
  }

  private async drainFeeder(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }
}

export async function sleepUntil(epochMs: number): Promise<void> {
  const wait = epochMs - Date.now();
  if (wait > 0) await new Promise((done) => setTimeout(done, wait));
}
